package main

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestGormiface(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Layering check suite")
}
