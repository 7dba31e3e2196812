package previewai_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestPreviewAI(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "previewai")
}
