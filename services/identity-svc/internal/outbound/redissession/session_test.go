package redissession_test

import (
	"context"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/identity-svc/internal/auth"
	"github.com/motionstudio/platform/services/identity-svc/internal/outbound/redissession"
)

var _ = Describe("refresh-token rotation", func() {
	const grace = 10 * time.Second
	var (
		ctx   context.Context
		store *redissession.Store
		sess  auth.Session
		t0    time.Time
	)

	BeforeEach(func() {
		ctx = context.Background()
		rdb, prefix := testkit.Redis("session")
		store = redissession.NewStore(rdb, prefix, time.Hour, time.Minute, nil)
		t0 = time.Now().UTC().Truncate(time.Millisecond)
		sess = auth.Session{ID: uuid.NewString(), UserID: uuid.NewString(), TenantID: uuid.NewString(), DeviceName: "Laptop", IssuedAt: t0, LastUsedAt: t0}
		Expect(store.Create(ctx, sess, auth.HashToken("h0"))).To(Succeed())
	})

	at := func(d time.Duration) auth.Use {
		return auth.Use{IPAddress: "192.0.2.1", UserAgent: "ua", At: t0.Add(d)}
	}

	It("exchanges the current token and records the use", func() {
		got, issued, err := store.Rotate(ctx, "h0", "h1", grace, at(time.Second))
		Expect(err).NotTo(HaveOccurred())
		Expect(issued).To(Equal("h1"))
		Expect(got.ID).To(Equal(sess.ID))
		Expect(got.UserID).To(Equal(sess.UserID))
		Expect(got.LastUsedAt).To(Equal(t0.Add(time.Second)))
		Expect(got.IPAddress).To(Equal("192.0.2.1"))
		_, _, err = store.Rotate(ctx, "h1", "h2", grace, at(2*time.Second))
		Expect(err).NotTo(HaveOccurred())
	})

	It("answers a retry inside the grace window with the same successor, never a new branch", func() {
		_, _, err := store.Rotate(ctx, "h0", "h1", grace, at(time.Second))
		Expect(err).NotTo(HaveOccurred())
		for _, candidate := range []string{"h1b", "h1c"} {
			got, issued, err := store.Rotate(ctx, "h0", candidate, grace, at(5*time.Second))
			Expect(err).NotTo(HaveOccurred())
			Expect(got.ID).To(Equal(sess.ID))
			Expect(issued).To(Equal("h1"), "the retry answers the successor the token was rotated to")
		}
		_, _, err = store.Rotate(ctx, "h1b", "h2", grace, at(6*time.Second))
		Expect(apperr.KindOf(err)).To(Equal(apperr.Unauthenticated), "no second branch was created")
		_, issued, err := store.Rotate(ctx, "h1", "h2", grace, at(6*time.Second))
		Expect(err).NotTo(HaveOccurred())
		Expect(issued).To(Equal("h2"))
	})

	It("treats a replaced token as reuse inside the grace window once its successor was used", func() {
		_, _, err := store.Rotate(ctx, "h0", "h1", grace, at(time.Second))
		Expect(err).NotTo(HaveOccurred())
		_, _, err = store.Rotate(ctx, "h1", "h2", grace, at(2*time.Second))
		Expect(err).NotTo(HaveOccurred())
		_, _, err = store.Rotate(ctx, "h0", "h1x", grace, at(3*time.Second))
		e, _ := apperr.As(err)
		Expect(e.Code).To(Equal("refresh_token_reused"))
		_, _, err = store.Rotate(ctx, "h2", "h3", grace, at(3*time.Second))
		Expect(apperr.KindOf(err)).To(Equal(apperr.Unauthenticated), "the session is revoked")
		revoked, err := store.Revoked(ctx, sess.ID, "", time.Time{})
		Expect(err).NotTo(HaveOccurred())
		Expect(revoked).To(BeTrue())
	})

	It("revokes the session when a rotated token comes back after the grace window", func() {
		_, _, err := store.Rotate(ctx, "h0", "h1", grace, at(time.Second))
		Expect(err).NotTo(HaveOccurred())
		_, _, err = store.Rotate(ctx, "h0", "hx", grace, at(time.Second+grace))
		Expect(apperr.KindOf(err)).To(Equal(apperr.Unauthenticated))
		e, _ := apperr.As(err)
		Expect(e.Code).To(Equal("refresh_token_reused"))

		_, _, err = store.Rotate(ctx, "h1", "h2", grace, at(time.Second+grace))
		Expect(apperr.KindOf(err)).To(Equal(apperr.Unauthenticated), "the current token of the session is dead too")
		revoked, err := store.Revoked(ctx, sess.ID, "", time.Time{})
		Expect(err).NotTo(HaveOccurred())
		Expect(revoked).To(BeTrue())
		list, err := store.List(ctx, sess.UserID)
		Expect(err).NotTo(HaveOccurred())
		Expect(list).To(BeEmpty())
	})

	It("refuses an unknown token without touching the session", func() {
		_, _, err := store.Rotate(ctx, "nope", "h1", grace, at(time.Second))
		Expect(apperr.KindOf(err)).To(Equal(apperr.Unauthenticated))
		_, err = store.Get(ctx, sess.ID)
		Expect(err).NotTo(HaveOccurred())
	})

	It("revokes every other session of the user", func() {
		other := sess
		other.ID = uuid.NewString()
		Expect(store.Create(ctx, other, auth.HashToken("o0"))).To(Succeed())
		Expect(store.RevokeOthers(ctx, sess.UserID, sess.ID)).To(Succeed())
		list, err := store.List(ctx, sess.UserID)
		Expect(err).NotTo(HaveOccurred())
		Expect(list).To(HaveLen(1))
		Expect(list[0].ID).To(Equal(sess.ID))
		_, _, err = store.Rotate(ctx, "o0", "o1", grace, at(time.Second))
		Expect(apperr.KindOf(err)).To(Equal(apperr.Unauthenticated))
	})

	It("revokes every session of the user, and no other user's, on a ban", func() {
		second := sess
		second.ID = uuid.NewString()
		Expect(store.Create(ctx, second, auth.HashToken("s0"))).To(Succeed())
		stranger := auth.Session{ID: uuid.NewString(), UserID: uuid.NewString(), TenantID: sess.TenantID, IssuedAt: t0, LastUsedAt: t0}
		Expect(store.Create(ctx, stranger, auth.HashToken("x0"))).To(Succeed())

		Expect(store.RevokeAll(ctx, sess.UserID)).To(Succeed())
		list, err := store.List(ctx, sess.UserID)
		Expect(err).NotTo(HaveOccurred())
		Expect(list).To(BeEmpty())
		for _, id := range []string{sess.ID, second.ID} {
			revoked, err := store.Revoked(ctx, id, "", time.Time{})
			Expect(err).NotTo(HaveOccurred())
			Expect(revoked).To(BeTrue(), "access tokens of session %s stop working", id)
		}
		_, _, err = store.Rotate(ctx, "h0", "h1", grace, at(time.Second))
		Expect(apperr.KindOf(err)).To(Equal(apperr.Unauthenticated))
		revoked, err := store.Revoked(ctx, stranger.ID, "", time.Time{})
		Expect(err).NotTo(HaveOccurred())
		Expect(revoked).To(BeFalse())
		_, _, err = store.Rotate(ctx, "x0", "x1", grace, at(time.Second))
		Expect(err).NotTo(HaveOccurred())
	})
})
