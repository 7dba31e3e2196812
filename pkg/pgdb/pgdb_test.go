package pgdb_test

import (
	"context"
	"embed"
	"errors"
	"log/slog"
	"net/url"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/pkg/testkit"
)

//go:embed testdata/migrations/*.sql
var files embed.FS

var widgets = pgdb.Embedded("widgets", files, "testdata/migrations")

var _ = Describe("the database kit", Ordered, func() {
	var db *gorm.DB

	BeforeAll(func() { db, _ = testkit.NewDatabase("pgdb", widgets) })
	BeforeEach(func() { testkit.Truncate(db) })

	It("applies embedded migrations once, even when asked again", func() {
		Expect(pgdb.Migrate(context.Background(), db, slog.New(slog.DiscardHandler), widgets)).To(Succeed())
		var versions int
		Expect(db.Raw(`SELECT count(*) FROM goose_widgets_version WHERE version_id = 1`).Scan(&versions).Error).To(Succeed())
		Expect(versions).To(Equal(1))
	})

	It("commits a transaction whose function succeeds and rolls back one that fails", func() {
		ctx := context.Background()
		Expect(pgdb.InTx(ctx, db, func(tx *gorm.DB) error {
			return tx.Exec(`INSERT INTO widgets (id, name, size) VALUES (1, 'kept', 1)`).Error
		})).To(Succeed())
		boom := errors.New("boom")
		Expect(pgdb.InTx(ctx, db, func(tx *gorm.DB) error {
			Expect(tx.Exec(`INSERT INTO widgets (id, name, size) VALUES (2, 'dropped', 1)`).Error).To(Succeed())
			return boom
		})).To(MatchError(boom))
		var names []string
		Expect(db.Raw(`SELECT name FROM widgets`).Scan(&names).Error).To(Succeed())
		Expect(names).To(ConsistOf("kept"))
	})

	DescribeTable("translates database errors into kinds with a message naming the record",
		func(stmt string, kind apperr.Kind, message string) {
			Expect(db.Exec(`INSERT INTO widgets (id, name, size) VALUES (1, 'first', 1)`).Error).To(Succeed())
			err := pgdb.Translate(db.Exec(stmt).Error, "widget")
			Expect(apperr.KindOf(err)).To(Equal(kind))
			e, _ := apperr.As(err)
			Expect(e.Message).To(Equal(message))
		},
		Entry("unique", `INSERT INTO widgets (id, name, size) VALUES (2, 'first', 1)`, apperr.Conflict, "widget already exists"),
		Entry("foreign key", `INSERT INTO widgets (id, name, owner, size) VALUES (2, 'b', 42, 1)`, apperr.Invalid, "widget refers to a record that does not exist"),
		Entry("check", `INSERT INTO widgets (id, name, size) VALUES (2, 'c', 0)`, apperr.Invalid, "widget violates a constraint"),
	)

	It("answers a database it cannot reach as unavailable, so that clients retry, even where nobody translates", func() {
		_, dsn := testkit.NewDatabase("pgdb_down")
		u, err := url.Parse(dsn)
		Expect(err).NotTo(HaveOccurred())
		proxy := testkit.NewTCPProxy(u.Host)
		u.Host = proxy.Addr()
		cut, err := pgdb.Open(context.Background(), pgdb.Config{DSN: u.String(), MaxOpenConns: 2, MaxIdleConns: 2})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _ = pgdb.Close(cut) })
		proxy.Cut()

		err = cut.Exec(`SELECT 1`).Error
		Expect(apperr.KindOf(err)).To(Equal(apperr.Unavailable), "%v", err)
		Expect(apperr.KindOf(pgdb.InTx(context.Background(), cut, func(tx *gorm.DB) error {
			return tx.Exec(`SELECT 1`).Error
		}))).To(Equal(apperr.Unavailable))

		proxy.Restore()
		Expect(cut.Exec(`SELECT 1`).Error).To(Succeed())
	})

	It("answers text Postgres cannot store as a client error even where nobody translates", func() {
		err := db.Exec(`INSERT INTO widgets (id, name, size) VALUES (1, ?, 1)`, "a\x00b").Error
		Expect(apperr.KindOf(err)).To(Equal(apperr.Invalid))
		Expect(apperr.KindOf(pgdb.Translate(err, "widget"))).To(Equal(apperr.Invalid))
		var row struct{ ID int }
		err = db.Table("widgets").Where("name = ?", "a\x00b").Take(&row).Error
		Expect(apperr.KindOf(err)).To(Equal(apperr.Invalid))
		var names []string
		err = db.Raw(`SELECT name FROM widgets WHERE name = ?`, "\xff\xfe").Scan(&names).Error
		Expect(apperr.KindOf(err)).To(Equal(apperr.Invalid))
		e, _ := apperr.As(err)
		Expect(e.Code).To(Equal("invalid_text"))
		err = db.Raw(`SELECT ?::jsonb ->> 'name'`, `{"name": "a\u0000b"}`).Scan(&names).Error
		Expect(apperr.KindOf(err)).To(Equal(apperr.Invalid), "a \\u0000 escape inside jsonb")
	})

	It("reports a missing row as not found and recognises unique violations by constraint", func() {
		var row struct{ ID int }
		err := db.Table("widgets").Where("id = 404").Take(&row).Error
		Expect(apperr.KindOf(pgdb.Translate(err, "widget"))).To(Equal(apperr.NotFound))
		Expect(pgdb.Translate(nil, "widget")).To(Succeed())

		Expect(db.Exec(`INSERT INTO widgets (id, name, size) VALUES (1, 'a', 1)`).Error).To(Succeed())
		dup := db.Exec(`INSERT INTO widgets (id, name, size) VALUES (2, 'a', 1)`).Error
		Expect(pgdb.IsUniqueViolation(dup, "widgets_name_key")).To(BeTrue())
		Expect(pgdb.IsUniqueViolation(dup, "other")).To(BeFalse())
	})
})
