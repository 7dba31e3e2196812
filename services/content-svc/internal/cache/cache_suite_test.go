package cache_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/content-svc/internal/store"
)

func TestCache(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "content-svc cache")
}

var (
	db  *gorm.DB
	dsn string
)

var _ = BeforeSuite(func() {
	db, dsn = testkit.NewDatabase("content_cache", store.Migrations)
})
