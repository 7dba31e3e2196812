package editor_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestEditor(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "editor")
}
