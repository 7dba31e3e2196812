package logx_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestLogx(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "logx")
}
