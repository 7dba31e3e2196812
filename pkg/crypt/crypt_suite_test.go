package crypt_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestCrypt(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "crypt")
}
