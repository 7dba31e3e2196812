package testkit

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/pgdb"
)

// AdminDSN is the maintenance connection used to create test databases
// (TEST_DATABASE_URL, default the local postgres database).
func AdminDSN() string {
	return Env("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
}

var validDBName = regexp.MustCompile(`^[a-z0-9_]+$`)

// DSNFor returns AdminDSN pointed at the named database.
func DSNFor(name string) string {
	u, err := url.Parse(AdminDSN())
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "TEST_DATABASE_URL")
	u.Path = "/" + name
	return u.String()
}

// NewDatabase creates a fresh database named "t_<scope>", applies the migrations and returns a
// connection to it. The database is dropped when the suite ends. The connection guards its
// transactions (pgdb.Config.GuardTransactions): a statement on the pool from a goroutine that
// holds one of its transactions panics, failing the spec; suites that open pools of their own
// on the returned DSN set the same option.
func NewDatabase(suite string, sources ...pgdb.Source) (*gorm.DB, string) {
	ctx := context.Background()
	name := "t_" + strings.ToLower(Scope(suite))
	gomega.Expect(validDBName.MatchString(name)).To(gomega.BeTrue(), "database name %q", name)

	admin, err := pgdb.Open(ctx, pgdb.Config{DSN: AdminDSN(), MaxOpenConns: 2, MaxIdleConns: 1})
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "postgres must be reachable at %s (run scripts/infra.sh up)", AdminDSN())
	recreate := func() error {
		if err := admin.Exec(fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", name)).Error; err != nil {
			return err
		}
		return admin.Exec(fmt.Sprintf("CREATE DATABASE %s", name)).Error
	}
	gomega.Expect(recreate()).To(gomega.Succeed())

	dsn := DSNFor(name)
	db, err := pgdb.Open(ctx, pgdb.Config{DSN: dsn, MaxOpenConns: 10, MaxIdleConns: 5, GuardTransactions: true})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	gomega.Expect(pgdb.Migrate(ctx, db, slog.New(slog.DiscardHandler), sources...)).To(gomega.Succeed())

	ginkgo.DeferCleanup(func() {
		_ = pgdb.Close(db)
		_ = admin.Exec(fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", name)).Error
		_ = pgdb.Close(admin)
	})
	return db, dsn
}

// Truncate empties every table of the public schema except goose's version tables, so each spec
// starts from a clean, migrated database.
func Truncate(db *gorm.DB) {
	var tables []string
	gomega.Expect(db.Raw(`SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename NOT LIKE 'goose_%'`).
		Scan(&tables).Error).To(gomega.Succeed())
	if len(tables) == 0 {
		return
	}
	quoted := make([]string, len(tables))
	for i, t := range tables {
		quoted[i] = `"` + t + `"`
	}
	// A process's background readers (a listing index catching up, a listener) may hold a share
	// lock on one table while TRUNCATE holds another: Postgres then ends one side as a deadlock,
	// and the truncation is simply tried again.
	truncate := "TRUNCATE " + strings.Join(quoted, ", ") + " RESTART IDENTITY CASCADE"
	gomega.Eventually(func() error { return db.Exec(truncate).Error }).
		WithTimeout(10 * time.Second).WithPolling(50 * time.Millisecond).
		Should(gomega.Succeed())
}
