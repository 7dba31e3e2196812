package redisx_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"

	"github.com/motionstudio/platform/pkg/testkit"
)

func TestRedisx(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "redisx")
}

var (
	client *redis.Client
	prefix string
)

var _ = BeforeSuite(func() {
	client, prefix = testkit.Redis("redisx")
})
