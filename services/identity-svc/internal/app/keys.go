package app

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"time"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/service"
	"github.com/motionstudio/platform/services/identity-svc/internal/config"
	"github.com/motionstudio/platform/services/identity-svc/internal/store"
	"github.com/motionstudio/platform/services/identity-svc/internal/token"
)

// sealSigningKeys is the purpose of the sealed private signing keys.
const sealSigningKeys = "motionstudio identity-svc signing keys v1"

// tokenSkew is the clock skew the verifiers tolerate on exp (pkg/authn's leeway), which a
// retired key's publication covers too.
const tokenSkew = 30 * time.Second

// newRing opens the signing keys in the database, importing SIGNING_KEY (or a fresh key of
// SIGNING_ALG) as the first one when there is none.
func newRing(ctx context.Context, db *gorm.DB, cfg config.Config, key ed25519.PrivateKey) (*token.Ring, error) {
	sealer, err := newSealer(cfg, key, sealSigningKeys)
	if err != nil {
		return nil, err
	}
	ring, err := token.NewRing(store.NewSigningKeys(db), sealer, token.RingConfig{
		Issuer:     cfg.Issuer,
		Alg:        cfg.SigningAlg,
		Prepublish: cfg.SigningKeyPrepublish,
		// A replica that has not reloaded yet signs with the retired key for up to one reload.
		Retention: max(cfg.AccessTokenTTL, cfg.ServiceTokenTTL) + tokenSkew + cfg.SigningKeyReload,
	}, service.Now)
	if err != nil {
		return nil, err
	}
	if err := ring.Import(ctx, key); err != nil {
		return nil, err
	}
	return ring, nil
}

// runRing rereads the signing keys every SIGNING_KEY_RELOAD and rotates them every
// SIGNING_KEY_ROTATE_EVERY when set.
func runRing(ctx context.Context, ring *token.Ring, cfg config.Config, log *slog.Logger) error {
	return ring.Run(ctx, cfg.SigningKeyReload, cfg.SigningKeyRotateEvery, func(err error) {
		log.ErrorContext(ctx, "signing keys", slog.Any("error", err))
	})
}

// adminKeys runs `admin keys list` and `admin keys rotate`.
func adminKeys(ctx context.Context, ring *token.Ring, args []string, out io.Writer) error {
	if len(args) != 1 || (args[0] != "list" && args[0] != "rotate") {
		return fmt.Errorf("admin keys: want list or rotate\n%s", adminUsage)
	}
	enc := json.NewEncoder(out)
	if args[0] == "rotate" {
		info, err := ring.Rotate(ctx)
		if err != nil {
			return err
		}
		return enc.Encode(keyJSON(info))
	}
	keys := []map[string]any{}
	for _, info := range ring.List() {
		keys = append(keys, keyJSON(info))
	}
	return enc.Encode(map[string]any{"keys": keys})
}

// keyJSON is the operator's view of a key: never its private part.
func keyJSON(k token.KeyInfo) map[string]any {
	m := map[string]any{"kid": k.ID, "alg": k.Alg, "state": k.State, "created_at": k.CreatedAt, "activates_at": k.ActivatesAt}
	if k.RetiredAt != nil {
		m["retired_at"] = *k.RetiredAt
	}
	if k.WithdrawnAt != nil {
		m["withdrawn_at"] = *k.WithdrawnAt
	}
	return m
}
