package openaiembed_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestOpenAIEmbed(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "openaiembed")
}
