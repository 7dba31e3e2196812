package pglisten_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestPglisten(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "pglisten")
}
