package app

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
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
	fs := flag.NewFlagSet("admin reseal", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	batch := fs.Int("batch", 500, "rows per transaction")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w\n%s", err, adminUsage)
	}
	cols, sealing, err := sealedColumns(cfg)
	if err != nil {
		return err
	}
	counts, err := pgdb.Reseal(ctx, db, cols, pgdb.ResealOptions{Batch: *batch, OnBatch: func(c pgdb.ResealCount) {
		log.InfoContext(ctx, "reseal", slog.String("kind", c.Kind), slog.Int("scanned", c.Scanned), slog.Int("resealed", c.Resealed))
	}})
	if counts == nil {
		counts = []pgdb.ResealCount{}
	}
	if encErr := json.NewEncoder(out).Encode(map[string]any{"key_id": sealing, "kinds": counts}); encErr != nil {
		return errors.Join(err, encErr)
	}
	return err
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
