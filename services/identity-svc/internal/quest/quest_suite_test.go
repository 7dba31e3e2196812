package quest_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestQuest(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "quest")
}
