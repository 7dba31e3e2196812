package pgdb_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestPgdb(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "pgdb")
}
