package revocation_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestRevocation(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "revocation")
}
