package bounded_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestBounded(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "bounded")
}
