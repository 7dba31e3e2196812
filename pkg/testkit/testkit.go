// Package testkit gives ginkgo suites isolated slices of the real infrastructure: a migrated
// database per parallel process, a Redis DB index, a NATS subject prefix and a bucket prefix,
// each cleaned up when the suite ends. Missing infrastructure fails the suite; it never skips.
package testkit

import (
	"fmt"
	"os"

	"github.com/onsi/ginkgo/v2"
)

// Env returns the environment variable's value or def.
func Env(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// Process is the ginkgo parallel process number (1 when running serially).
func Process() int { return ginkgo.GinkgoParallelProcess() }

// Scope is a short name unique to this suite, ginkgo process and OS process, used to namespace
// databases, subjects, buckets and keys: "<suite>_p<process>_<pid>". The pid keeps two test
// runs on one machine (a developer's and CI's, or two suites' binaries) from meeting.
func Scope(suite string) string { return fmt.Sprintf("%s_p%d_%d", suite, Process(), os.Getpid()) }
