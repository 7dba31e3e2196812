package revocation_test

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/motionstudio/platform/pkg/natsx"
	"github.com/motionstudio/platform/pkg/revocation"
	"github.com/motionstudio/platform/pkg/testkit"
	events "github.com/motionstudio/platform/proto-events"
	identityv1 "github.com/motionstudio/platform/proto-events/gen/identity/v1"
)

var _ = Describe("the deny list", func() {
	It("refuses a session until its tokens expire, and ignores a time already past", func() {
		d := revocation.NewDenyList()
		live, expiring, past := uuid.NewString(), uuid.NewString(), uuid.NewString()
		d.Deny(live, time.Now().Add(time.Hour))
		d.Deny(expiring, time.Now().Add(300*time.Millisecond))
		d.Deny(past, time.Now().Add(-time.Second))
		Expect(d.Revoked(live)).To(BeTrue())
		Expect(d.Revoked(expiring)).To(BeTrue())
		Expect(d.Revoked(past)).To(BeFalse())
		Expect(d.Revoked(uuid.NewString())).To(BeFalse())
		Eventually(func() bool { return d.Revoked(expiring) }).Should(BeFalse())
		Expect(d.Revoked(live)).To(BeTrue())
	})
})

var _ = Describe("the deny list's suspended tenants", func() {
	It("refuses a tenant's tokens issued before the cutoff until they have expired, and no others", func() {
		d := revocation.NewDenyList()
		tenant, other := uuid.NewString(), uuid.NewString()
		cutoff := time.Now().Truncate(time.Second)
		d.DenyTenant(tenant, cutoff, time.Now().Add(400*time.Millisecond))
		Expect(d.TenantRevoked(tenant, cutoff.Add(-time.Second))).To(BeTrue())
		Expect(d.TenantRevoked(tenant, cutoff)).To(BeFalse(), "a token issued at the cutoff is newer")
		Expect(d.TenantRevoked(other, cutoff.Add(-time.Second))).To(BeFalse())
		Eventually(func() bool { return d.TenantRevoked(tenant, cutoff.Add(-time.Second)) }).Should(BeFalse())
	})

	It("keeps the later of two cutoffs", func() {
		d := revocation.NewDenyList()
		tenant := uuid.NewString()
		now := time.Now().Truncate(time.Second)
		d.DenyTenant(tenant, now, now.Add(time.Hour))
		d.DenyTenant(tenant, now.Add(-time.Minute), now.Add(time.Hour))
		Expect(d.TenantRevoked(tenant, now.Add(-time.Second))).To(BeTrue())
	})
})

var _ = Describe("following identity's session revocations", func() {
	var (
		bus *natsx.Bus
		log *slog.Logger
	)

	BeforeEach(func() {
		bus = testkit.Bus("revocation")
		log = slog.New(slog.NewTextHandler(GinkgoWriter, nil))
	})

	ensureStream := func() {
		for _, s := range events.Streams() {
			if s.Name == events.StreamIdentityEvents {
				Expect(bus.EnsureStream(context.Background(), bus.StreamSpec(s.Name, s.Subjects, s.Jobs))).To(Succeed())
			}
		}
	}
	publish := func(sessionID string, denyUntil time.Time) {
		GinkgoHelper()
		now := time.Now()
		ev, err := natsx.NewEvent(events.SourceIdentity, events.SubjectSessionRevoked, events.SubjectSessionRevoked,
			&identityv1.SessionRevoked{SessionId: sessionID, UserId: uuid.NewString(), TenantId: uuid.NewString(),
				RevokedAt: timestamppb.New(now), DenyUntil: timestamppb.New(denyUntil)})
		Expect(err).NotTo(HaveOccurred())
		Expect(bus.Publish(context.Background(), ev)).To(Succeed())
	}
	follow := func(d *revocation.DenyList) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- d.Follow(ctx, bus, log, 0) }()
		DeferCleanup(func() {
			cancel()
			Eventually(done).Should(Receive(BeNil()))
		})
	}

	It("denies each revoked session within a second of its event", func() {
		ensureStream()
		d := revocation.NewDenyList()
		follow(d)
		first := uuid.NewString()
		publish(first, time.Now().Add(15*time.Minute))
		Eventually(func() bool { return d.Revoked(first) }).WithTimeout(2 * time.Second).Should(BeTrue())

		sid := uuid.NewString()
		publish(sid, time.Now().Add(15*time.Minute))
		Eventually(func() bool { return d.Revoked(sid) }).WithTimeout(time.Second).Should(BeTrue())
	})

	It("refuses a suspended tenant's older tokens within a second, and keeps refusing them after a reactivation", func() {
		ensureStream()
		d := revocation.NewDenyList()
		follow(d)
		tenant, marker := uuid.NewString(), uuid.NewString()
		notBefore := time.Now().Truncate(time.Second).Add(time.Second)
		change := func(tenant, to string, cutoff bool) {
			GinkgoHelper()
			msg := &identityv1.TenantStatusChanged{TenantId: tenant, ToStatus: to, ChangedAt: timestamppb.Now()}
			if cutoff {
				msg.TokensNotBefore, msg.DenyUntil = timestamppb.New(notBefore), timestamppb.New(notBefore.Add(16*time.Minute))
			}
			ev, err := natsx.NewEvent(events.SourceIdentity, events.SubjectTenantStatusChanged, events.SubjectTenantStatusChanged, msg)
			Expect(err).NotTo(HaveOccurred())
			Expect(bus.Publish(context.Background(), ev)).To(Succeed())
		}
		change(tenant, "Suspended", true)
		Eventually(func() bool { return d.TenantRevoked(tenant, notBefore.Add(-time.Second)) }).WithTimeout(time.Second).Should(BeTrue())
		change(tenant, "Active", false)
		change(marker, "Suspended", true)
		Eventually(func() bool { return d.TenantRevoked(marker, notBefore.Add(-time.Second)) }).WithTimeout(time.Second).
			Should(BeTrue(), "the reactivation before it was read")
		Expect(d.TenantRevoked(tenant, notBefore.Add(-time.Second))).To(BeTrue())
		Expect(d.TenantRevoked(tenant, notBefore)).To(BeFalse())
	})

	It("waits for identity to create the stream, warning once rather than at every retry", func() {
		logs := gbytes.NewBuffer()
		log = slog.New(slog.NewTextHandler(logs, nil))
		d := revocation.NewDenyList()
		follow(d)
		Eventually(logs).Should(gbytes.Say("cannot follow session revocations yet"))
		warnings := func() int { return strings.Count(string(logs.Contents()), "cannot follow") }
		Consistently(warnings).WithTimeout(2500 * time.Millisecond).Should(Equal(1)) // two more retries
		ensureStream()
		sid := uuid.NewString()
		publish(sid, time.Now().Add(15*time.Minute))
		Eventually(func() bool { return d.Revoked(sid) }).WithTimeout(5 * time.Second).Should(BeTrue())
		Eventually(logs).Should(gbytes.Say("following session revocations"))
		Expect(warnings()).To(Equal(1))
	})

	It("rebuilds the list after a restart from the recent revocations, leaving out expired ones", func() {
		ensureStream()
		live, expired := uuid.NewString(), uuid.NewString()
		publish(live, time.Now().Add(15*time.Minute))
		publish(expired, time.Now().Add(-time.Minute))

		restarted := revocation.NewDenyList()
		follow(restarted)
		Eventually(func() bool { return restarted.Revoked(live) }).WithTimeout(2 * time.Second).Should(BeTrue())
		Expect(restarted.Revoked(expired)).To(BeFalse())
	})
})
