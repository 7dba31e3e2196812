package app

import (
	"context"
	"io"
	"log/slog"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/identity-svc/internal/config"
)

// adminReseal runs `admin reseal [-batch N]`: it rewrites every sealed value of the service
// (TOTP secrets, webhook secrets, private signing keys) under the first key of ENCRYPTION_KEYS
// and prints the counts per kind, never a value. A run that stops continues where it was when
// run again; one that finds nothing to do changes nothing.
func adminReseal(ctx context.Context, db *gorm.DB, cfg config.Config, log *slog.Logger, args []string, out io.Writer) error {
	cols, sealing, err := sealedColumns(cfg)
	if err != nil {
		return err
	}
	return pgdb.ResealCommand(ctx, db, cols, sealing, args, log, out)
}

// sealedColumns lists every sealed column of identity-svc with the ring its values are sealed
// under, and the id of the key that seals.
func sealedColumns(cfg config.Config) ([]pgdb.SealedColumn, string, error) {
	key, err := signingKey(cfg)
	if err != nil {
		return nil, "", err
	}
	rowID := func(id string) []byte { return []byte(id) }
	var (
		cols    []pgdb.SealedColumn
		sealing string
	)
	for _, c := range []struct{ kind, table, key, column, purpose string }{
		{"totp_secrets", "mfa_factors", "id", "secret_sealed", sealMFA},
		{"webhook_secrets", "webhooks", "id", "secret_sealed", sealWebhooks},
		{"signing_keys", "signing_keys", "kid", "private_key", sealSigningKeys},
	} {
		ring, err := newSealer(cfg, key, c.purpose)
		if err != nil {
			return nil, "", err
		}
		cols = append(cols, pgdb.SealedColumn{Kind: c.kind, Table: c.table, Key: c.key, Column: c.column, AAD: rowID, Ring: ring})
		sealing = ring.SealingID()
	}
	return cols, sealing, nil
}
