package modelclient_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestModelClient(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "modelclient")
}
