package mfa_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestMFA(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "mfa")
}
