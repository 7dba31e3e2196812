package pgjobs_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/testkit"
)

func TestPgjobs(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "pgjobs")
}

var db *gorm.DB

var _ = BeforeSuite(func() {
	db, _ = testkit.NewDatabase("pgjobs")
	// A job table of the shape every job kind has: states, a lease, attempts, a touch time, a
	// retry time and the job's outcome.
	Expect(db.Exec(`CREATE TABLE tasks (
		id          text PRIMARY KEY,
		status      text        NOT NULL,
		attempts    integer     NOT NULL DEFAULT 0,
		lease_owner text        NOT NULL DEFAULT '',
		lease_until timestamptz,
		touched_at  timestamptz NOT NULL DEFAULT now(),
		retry_at    timestamptz,
		result      text        NOT NULL DEFAULT '')`).Error).To(Succeed())
})
