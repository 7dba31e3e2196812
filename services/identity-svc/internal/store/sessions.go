package store

import (
	"context"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/pgdb"
	events "github.com/motionstudio/platform/proto-events"
	identityv1 "github.com/motionstudio/platform/proto-events/gen/identity/v1"
)

// SessionEvents writes identity.session.revoked.v1 to the outbox, implementing
// redissession.Revocations.
type SessionEvents struct {
	db     *gorm.DB
	outbox *outbox.Writer
	// tokenLife is how long after a revocation one of the session's access tokens may still be
	// presented: the access-token lifetime plus the verifiers' clock leeway.
	tokenLife time.Duration
}

// NewSessionEvents returns a SessionEvents whose events deny a session for tokenLife after its
// revocation.
func NewSessionEvents(db *gorm.DB, w *outbox.Writer, tokenLife time.Duration) *SessionEvents {
	return &SessionEvents{db: db, outbox: w, tokenLife: tokenLife}
}

// SessionRevoked records that the session ended at the given time. It returns the database's
// errors as apperr kinds.
func (s *SessionEvents) SessionRevoked(ctx context.Context, sessionID, userID, tenantID string, at time.Time) error {
	msg := &identityv1.SessionRevoked{
		SessionId: sessionID, UserId: userID, TenantId: tenantID,
		RevokedAt: timestamppb.New(at), DenyUntil: timestamppb.New(at.Add(s.tokenLife)),
	}
	err := pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		_, err := s.outbox.Add(ctx, tx, events.SubjectSessionRevoked, events.SubjectSessionRevoked, msg)
		return err
	})
	return pgdb.Translate(err, "session revocation")
}
