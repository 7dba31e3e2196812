package helmcheck_test

import (
	"os"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestHelmcheck(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Helm chart and Tiltfile suite")
}

// env returns the environment variable key, or def when it is unset or empty.
func env(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
