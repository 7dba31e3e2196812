package pgdb_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/pkg/testkit"
)

var _ = Describe("the transaction guard of test databases", Ordered, func() {
	var (
		db  *gorm.DB
		dsn string
		ctx = context.Background()
	)

	BeforeAll(func() { db, dsn = testkit.NewDatabase("pgdb_guard", widgets) })
	BeforeEach(func() { testkit.Truncate(db) })

	count := func(q *gorm.DB) int {
		GinkgoHelper()
		var n int
		Expect(q.Raw(`SELECT count(*) FROM widgets`).Scan(&n).Error).To(Succeed())
		return n
	}

	It("fails a statement on the pool from the goroutine that holds a transaction of it, and rolls the transaction back", func() {
		Expect(func() {
			_ = pgdb.InTx(ctx, db, func(tx *gorm.DB) error {
				Expect(tx.Exec(`INSERT INTO widgets (id, name, size) VALUES (1, 'locked', 1)`).Error).To(Succeed())
				count(db.WithContext(ctx))
				return nil
			})
		}).To(PanicWith(ContainSubstring("a statement on the pool while this goroutine holds a transaction")))
		Expect(count(db)).To(BeZero(), "the transaction was rolled back")
	})

	It("fails a transaction begun on the pool inside another one", func() {
		Expect(func() {
			_ = pgdb.InTx(ctx, db, func(*gorm.DB) error {
				return pgdb.InTx(ctx, db, func(inner *gorm.DB) error { return inner.Exec(`SELECT 1`).Error })
			})
		}).To(PanicWith(ContainSubstring("BEGIN")))
		Expect(count(db)).To(BeZero(), "the pool serves again once the transaction ended")
	})

	It("lets the transaction's statements, its savepoints and other goroutines' statements through", func() {
		others := make(chan int)
		Expect(pgdb.InTx(ctx, db, func(tx *gorm.DB) error {
			Expect(tx.Exec(`INSERT INTO widgets (id, name, size) VALUES (1, 'a', 1)`).Error).To(Succeed())
			Expect(tx.Transaction(func(sp *gorm.DB) error {
				return sp.Exec(`INSERT INTO widgets (id, name, size) VALUES (2, 'b', 1)`).Error
			})).To(Succeed())
			_, inTx := tx.Statement.ConnPool.(gorm.TxCommitter)
			Expect(inTx).To(BeTrue(), "code that asks whether it runs in a transaction still knows")
			_, err := tx.DB()
			Expect(err).NotTo(HaveOccurred())
			go func() {
				defer GinkgoRecover()
				others <- count(db.WithContext(ctx))
			}()
			Eventually(others).Should(Receive(BeZero()), "another goroutine reads the pool and does not see the uncommitted rows")
			return nil
		})).To(Succeed())
		Expect(count(db)).To(Equal(2))
	})

	It("costs nothing where it is not asked for: a pool opened without it lets the mistake through", func() {
		plain, err := pgdb.Open(ctx, pgdb.Config{DSN: dsn, MaxOpenConns: 2, MaxIdleConns: 1})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _ = pgdb.Close(plain) })
		Expect(pgdb.InTx(ctx, plain, func(tx *gorm.DB) error {
			count(plain.WithContext(ctx))
			return tx.Exec(`INSERT INTO widgets (id, name, size) VALUES (1, 'a', 1)`).Error
		})).To(Succeed())
		Expect(count(db)).To(Equal(1))
	})
})
