package pgdb_test

import (
	"context"
	"crypto/rand"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/crypt"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/pkg/testkit"
)

// interfering reseals like its ring, but first lets another writer replace the row's value once.
type interfering struct {
	ring  *crypt.Ring
	write func()
}

func (i *interfering) Reseal(sealed, aad []byte) ([]byte, bool, error) {
	if i.write != nil {
		w := i.write
		i.write = nil
		w()
	}
	return i.ring.Reseal(sealed, aad)
}

var _ = Describe("resealing values at rest", Ordered, func() {
	var (
		db   *gorm.DB
		a, b crypt.Key
	)
	aad := func(id string) []byte { return []byte("secret:" + id) }
	column := func(r pgdb.Resealer) []pgdb.SealedColumn {
		return []pgdb.SealedColumn{{Kind: "secrets", Table: "secrets", Key: "id", Column: "sealed", AAD: aad, Ring: r}}
	}
	newRing := func(keys ...crypt.Key) *crypt.Ring {
		r, err := crypt.NewRing(keys...)
		Expect(err).NotTo(HaveOccurred())
		return r
	}
	openAll := func(r *crypt.Ring) []string {
		var rows []struct {
			ID     string
			Sealed []byte
		}
		Expect(db.Raw(`SELECT id::text AS id, sealed FROM secrets WHERE sealed IS NOT NULL ORDER BY id`).Scan(&rows).Error).To(Succeed())
		var out []string
		for _, row := range rows {
			plain, err := r.Open(row.Sealed, aad(row.ID))
			Expect(err).NotTo(HaveOccurred(), row.ID)
			out = append(out, string(plain))
		}
		return out
	}

	BeforeAll(func() {
		db, _ = testkit.NewDatabase("pgdb_reseal", widgets)
		Expect(db.Exec(`CREATE TABLE secrets (id uuid PRIMARY KEY, sealed bytea)`).Error).To(Succeed())
	})
	BeforeEach(func() {
		Expect(db.Exec(`DELETE FROM secrets`).Error).To(Succeed())
		a = crypt.Key{ID: "a", Secret: make([]byte, crypt.KeySize)}
		b = crypt.Key{ID: "b", Secret: make([]byte, crypt.KeySize)}
		_, _ = rand.Read(a.Secret)
		_, _ = rand.Read(b.Secret)
		underA := newRing(a)
		for i := range 7 {
			id := fmt.Sprintf("00000000-0000-0000-0000-%012d", i+1)
			sealed, err := underA.Seal(fmt.Appendf(nil, "value %d", i+1), aad(id))
			Expect(err).NotTo(HaveOccurred())
			Expect(db.Exec(`INSERT INTO secrets (id, sealed) VALUES (?, ?)`, id, sealed).Error).To(Succeed())
		}
		Expect(db.Exec(`INSERT INTO secrets (id, sealed) VALUES ('00000000-0000-0000-0000-000000000099', NULL)`).Error).To(Succeed())
	})

	It("moves every value under the first key, resumes after an interruption and then changes nothing", func() {
		ctx, cancel := context.WithCancel(context.Background())
		counts, err := pgdb.Reseal(ctx, db, column(newRing(b, a)), pgdb.ResealOptions{Batch: 3, OnBatch: func(pgdb.ResealCount) { cancel() }})
		Expect(err).To(MatchError(context.Canceled))
		Expect(counts).To(Equal([]pgdb.ResealCount{{Kind: "secrets", Scanned: 3, Resealed: 3}}))

		counts, err = pgdb.Reseal(context.Background(), db, column(newRing(b, a)), pgdb.ResealOptions{Batch: 3})
		Expect(err).NotTo(HaveOccurred())
		Expect(counts).To(Equal([]pgdb.ResealCount{{Kind: "secrets", Scanned: 7, Resealed: 4}}))

		counts, err = pgdb.Reseal(context.Background(), db, column(newRing(b, a)), pgdb.ResealOptions{Batch: 3})
		Expect(err).NotTo(HaveOccurred())
		Expect(counts).To(Equal([]pgdb.ResealCount{{Kind: "secrets", Scanned: 7, Resealed: 0}}))

		Expect(openAll(newRing(b))).To(Equal([]string{"value 1", "value 2", "value 3", "value 4", "value 5", "value 6", "value 7"}))
	})

	It("keeps a value another writer stored while the batch ran", func() {
		ring := newRing(b, a)
		first := "00000000-0000-0000-0000-000000000001"
		r := &interfering{ring: ring, write: func() {
			sealed, err := ring.Seal([]byte("written meanwhile"), aad(first))
			Expect(err).NotTo(HaveOccurred())
			done := make(chan error)
			go func() { done <- db.Exec(`UPDATE secrets SET sealed = ? WHERE id = ?`, sealed, first).Error }()
			Expect(<-done).To(Succeed())
		}}
		counts, err := pgdb.Reseal(context.Background(), db, column(r), pgdb.ResealOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(counts).To(Equal([]pgdb.ResealCount{{Kind: "secrets", Scanned: 7, Resealed: 6}}))
		Expect(openAll(newRing(b))[0]).To(Equal("written meanwhile"))
	})

	It("counts values no key opens, leaves them and says removing a key is not safe", func() {
		counts, err := pgdb.Reseal(context.Background(), db, column(newRing(b)), pgdb.ResealOptions{})
		Expect(err).To(MatchError(pgdb.ErrUnreadable))
		Expect(counts).To(Equal([]pgdb.ResealCount{{Kind: "secrets", Scanned: 7, Unreadable: 7}}))
		Expect(openAll(newRing(a))).To(HaveLen(7))
	})
})
