package app_test

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/natsx"
	"github.com/motionstudio/platform/pkg/testkit"
	events "github.com/motionstudio/platform/proto-events"
	identityv1 "github.com/motionstudio/platform/proto-events/gen/identity/v1"
)

var _ = Describe("sessions identity revoked", func() {
	var identityBus *natsx.Bus

	BeforeEach(func(ctx context.Context) {
		var err error
		identityBus, err = natsx.Connect(ctx, natsx.Config{URL: testkit.NATSURL(), Prefix: natsPrefix}, "identity-stand-in", slog.New(slog.DiscardHandler))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(identityBus.Close)
		for _, s := range events.Streams() {
			if s.Name == events.StreamIdentityEvents {
				Expect(identityBus.EnsureStream(ctx, identityBus.StreamSpec(s.Name, s.Subjects, s.Jobs))).To(Succeed())
			}
		}
	})

	tokenOf := func(sessionID string) string {
		return tokens.Token(authn.Claims{Subject: uuid.NewString(), TenantID: uuid.NewString(), SessionID: sessionID,
			TokenUse: authn.TokenUseAccess, ExpiresAt: time.Now().Add(10 * time.Minute)})
	}
	revoke := func(sessionID string) {
		GinkgoHelper()
		now := time.Now()
		ev, err := natsx.NewEvent(events.SourceIdentity, events.SubjectSessionRevoked, events.SubjectSessionRevoked,
			&identityv1.SessionRevoked{SessionId: sessionID, RevokedAt: timestamppb.New(now), DenyUntil: timestamppb.New(now.Add(16 * time.Minute))})
		Expect(err).NotTo(HaveOccurred())
		Expect(identityBus.Publish(context.Background(), ev)).To(Succeed())
	}
	status := func(token string) func() int {
		return func() int { return client.Do("GET", "/v1/fonts", token, nil).Status }
	}

	It("refuses the session's tokens within a second of the revocation and keeps the others", func() {
		// The service follows the stream once it exists; a first revocation shows it does.
		warmUp := uuid.NewString()
		revoke(warmUp)
		Eventually(status(tokenOf(warmUp))).WithTimeout(5 * time.Second).Should(Equal(http.StatusUnauthorized))

		sid := uuid.NewString()
		token := tokenOf(sid)
		Expect(status(token)()).To(Equal(http.StatusOK))
		revoke(sid)
		Eventually(status(token)).WithTimeout(time.Second).WithPolling(20 * time.Millisecond).Should(Equal(http.StatusUnauthorized))
		r := client.Do("GET", "/v1/fonts", token, nil)
		Expect(r.Body).To(ContainSubstring(`"code":"session_revoked"`))
		Expect(status(tokenOf(uuid.NewString()))()).To(Equal(http.StatusOK))
	})
})
