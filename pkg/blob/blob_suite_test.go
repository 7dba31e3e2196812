package blob_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/blob"
	"github.com/motionstudio/platform/pkg/testkit"
)

func TestBlob(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "blob")
}

var store *blob.Store

var _ = BeforeSuite(func() {
	store = testkit.Blob("blob")
})
