package clientgen_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestClientgen(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Generated API clients suite")
}
