package app

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/pkg/redisx"
	"github.com/motionstudio/platform/pkg/service"
	events "github.com/motionstudio/platform/proto-events"
	"github.com/motionstudio/platform/services/identity-svc/internal/account"
	"github.com/motionstudio/platform/services/identity-svc/internal/actor"
	"github.com/motionstudio/platform/services/identity-svc/internal/auth"
	"github.com/motionstudio/platform/services/identity-svc/internal/config"
	"github.com/motionstudio/platform/services/identity-svc/internal/outbound/redissession"
	"github.com/motionstudio/platform/services/identity-svc/internal/password"
	"github.com/motionstudio/platform/services/identity-svc/internal/store"
	"github.com/motionstudio/platform/services/identity-svc/internal/tenant"
	"github.com/motionstudio/platform/services/identity-svc/internal/token"
)

const adminUsage = `usage: identity-svc admin <command> [flags]

commands:
  create-tenant -slug S -name N -email E [-kind Reseller|Enterprise]
  create-user   -tenant SLUG -email E -password P [-name N] [-platform-admin] [-tenant-admin]
  token         -tenant SLUG -email E [-ttl D]       mint a user access token (local use; D defaults to ACCESS_TOKEN_TTL)
  keys list                                        the signing keys and their states
  keys rotate                                      add a signing key; it signs after SIGNING_KEY_PREPUBLISH
  reseal        [-batch N]                         seal every secret at rest again under the first key of ENCRYPTION_KEYS
  tenant-status SLUG|ID Active|Trial|Suspended|Cancelled   set a tenant's status (audited; Cancelled is final)
  plan|gift|quest create|retire -tenant SLUG ...  a tenant's offers (run "admin plan" for the flags)`

// Admin runs the operator CLI: it creates tenants and users, sets a tenant's status, creates
// and retires plans, gifts and quests, mints access tokens, lists and rotates the signing keys
// and reseals the secrets at rest, writing one JSON object to out. It migrates the database
// first, so it works on a fresh one.
func Admin(ctx context.Context, cfg config.Config, log *slog.Logger, args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New(adminUsage)
	}
	if err := Migrate(ctx, cfg, log); err != nil {
		return err
	}
	db, err := pgdb.Open(ctx, cfg.DB)
	if err != nil {
		return err
	}
	defer pgdb.Close(db)
	writer := outbox.NewWriter(events.SourceIdentity)
	accounts := account.NewService(store.NewUsers(db, writer, nil), store.NewTenants(db, writer, nil),
		password.NewHasher(password.Default), service.Now, service.NewID)
	enc := json.NewEncoder(out)
	fs := flag.NewFlagSet("admin "+args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard)

	switch args[0] {
	case "create-tenant":
		slug := fs.String("slug", "", "tenant slug")
		name := fs.String("name", "", "tenant name")
		email := fs.String("email", "", "contact email")
		kind := fs.String("kind", tenant.KindReseller, "Reseller or Enterprise")
		if err := fs.Parse(args[1:]); err != nil {
			return fmt.Errorf("%w\n%s", err, adminUsage)
		}
		tenants := tenant.NewService(store.NewTenants(db, writer, nil), nil, tenant.Options{Now: service.Now, NewID: service.NewID})
		t, err := tenants.Create(ctx, actor.Actor{PlatformAdmin: true}, tenant.New{Slug: *slug, Name: *name, ContactEmail: *email, Kind: *kind})
		if err != nil {
			return err
		}
		return enc.Encode(map[string]any{"id": t.ID, "slug": t.Slug, "name": t.Name})
	case "create-user":
		tenant := fs.String("tenant", "", "tenant slug")
		email := fs.String("email", "", "email")
		pw := fs.String("password", "", "password (at least 8 characters)")
		name := fs.String("name", "", "full name")
		admin := fs.Bool("platform-admin", false, "platform administrator")
		tadmin := fs.Bool("tenant-admin", false, "tenant administrator")
		if err := fs.Parse(args[1:]); err != nil {
			return fmt.Errorf("%w\n%s", err, adminUsage)
		}
		u, err := accounts.CreateUser(ctx, account.NewUser{
			TenantSlug: *tenant, Email: *email, Password: *pw, FullName: *name, Admin: *admin, TenantAdmin: *tadmin,
		})
		if err != nil {
			return err
		}
		return enc.Encode(map[string]any{"id": u.ID, "tenant_id": u.TenantID, "email": *u.Email, "is_admin": u.IsAdmin})
	case "token":
		tenant := fs.String("tenant", "", "tenant slug")
		email := fs.String("email", "", "email")
		ttl := fs.Duration("ttl", cfg.AccessTokenTTL, "token lifetime (default ACCESS_TOKEN_TTL)")
		if err := fs.Parse(args[1:]); err != nil {
			return fmt.Errorf("%w\n%s", err, adminUsage)
		}
		u, err := accounts.UserByEmail(ctx, *tenant, *email)
		if err != nil {
			return err
		}
		ring, err := adminRing(ctx, db, cfg)
		if err != nil {
			return err
		}
		issued, err := token.NewIssuer(ring, token.IssuerConfig{AccessTTL: cfg.AccessTokenTTL, Audience: cfg.Audience}, service.Now).Access(auth.Subject{
			UserID: u.ID, TenantID: u.TenantID, SessionID: service.NewID(), Admin: u.IsAdmin, TenantAdmin: u.IsTenantAdmin,
		}, *ttl)
		if err != nil {
			return err
		}
		return enc.Encode(map[string]any{"access_token": issued.Token, "token_type": "Bearer", "expires_in": int(issued.ExpiresIn / time.Second)})
	case "keys":
		ring, err := adminRing(ctx, db, cfg)
		if err != nil {
			return err
		}
		return adminKeys(ctx, ring, args[1:], out)
	case "reseal":
		return adminReseal(ctx, db, cfg, log, args[1:], out)
	case "tenant-status":
		return adminTenantStatus(ctx, db, cfg, writer, args[1:], enc)
	case "plan", "gift", "quest":
		return adminCatalog(ctx, db, args[0], args[1:], enc)
	default:
		return fmt.Errorf("unknown admin command %q\n%s", args[0], adminUsage)
	}
}

// adminRing opens the signing keys as a serving replica does.
func adminRing(ctx context.Context, db *gorm.DB, cfg config.Config) (*token.Ring, error) {
	key, err := signingKey(cfg)
	if err != nil {
		return nil, err
	}
	return newRing(ctx, db, cfg, key)
}

// adminTenantStatus sets a tenant's status as a platform admin does through PATCH
// /v1/tenants/{id}: audited as changed by tenant.CLIActor, with its event, and with the
// Redis marker that makes identity refuse a suspended tenant's tokens at once.
func adminTenantStatus(ctx context.Context, db *gorm.DB, cfg config.Config, writer *outbox.Writer, args []string, enc *json.Encoder) error {
	if len(args) != 2 {
		return errors.New(adminUsage)
	}
	rdb, err := redisx.Connect(ctx, cfg.Redis)
	if err != nil {
		return err
	}
	defer func() { _ = rdb.Close() }()
	tenantStore := store.NewTenants(db, writer, nil)
	id := args[0]
	if _, err := uuid.Parse(id); err != nil {
		t, err := tenantStore.BySlug(ctx, strings.ToLower(id))
		if err != nil {
			return err
		}
		id = t.ID
	}
	marker := redissession.NewStore(rdb, cfg.Redis.KeyPrefix, cfg.Auth.RefreshTokenTTL, revokedFor(cfg), nil)
	tenants := tenant.NewService(tenantStore, nil, tenant.Options{
		Now: service.Now, NewID: service.NewID, TokenLife: revokedFor(cfg), Hooks: []tenant.StatusHook{marker},
	})
	t, err := tenants.SetStatus(ctx, actor.Actor{PlatformAdmin: true}, id, args[1])
	if err != nil {
		return err
	}
	return enc.Encode(map[string]any{"id": t.ID, "slug": t.Slug, "status": t.Status, "tokens_not_before": t.TokensNotBefore})
}
