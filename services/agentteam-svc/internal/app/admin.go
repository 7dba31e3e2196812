package app

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/config"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/connection"
)

const adminUsage = `usage: agentteam-svc admin <command> [flags]

commands:
  reseal [-batch N]   seal every model key and MCP header set again under the first key of ENCRYPTION_KEYS`

// Admin runs the operator CLI. `admin reseal` rewrites every sealed value of the service (model
// connection keys, MCP server headers) under the first key of ENCRYPTION_KEYS in batches and
// writes the counts per kind as one JSON object to out, never a value; a run that stops
// continues where it was when run again. It migrates the database first.
func Admin(ctx context.Context, cfg config.Config, log *slog.Logger, args []string, out io.Writer) error {
	if len(args) == 0 || args[0] != "reseal" {
		return errors.New(adminUsage)
	}
	ring, err := sealer(cfg, log)
	if err != nil {
		return err
	}
	if err := Migrate(ctx, cfg, log); err != nil {
		return err
	}
	db, err := pgdb.Open(ctx, cfg.DB)
	if err != nil {
		return err
	}
	defer pgdb.Close(db)
	cols := []pgdb.SealedColumn{
		{Kind: "model_keys", Table: "model_connections", Key: "id", Column: "api_key_sealed", AAD: connection.ModelAAD, Ring: ring},
		{Kind: "mcp_headers", Table: "mcp_servers", Key: "id", Column: "headers_sealed", AAD: connection.MCPAAD, Ring: ring},
	}
	return pgdb.ResealCommand(ctx, db, cols, ring.SealingID(), args[1:], log, out)
}
