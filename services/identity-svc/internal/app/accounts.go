package app

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/motionstudio/platform/pkg/outbound"
	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/redisx"
	"github.com/motionstudio/platform/pkg/service"
	events "github.com/motionstudio/platform/proto-events"
	"github.com/motionstudio/platform/services/identity-svc/internal/account"
	"github.com/motionstudio/platform/services/identity-svc/internal/apikey"
	"github.com/motionstudio/platform/services/identity-svc/internal/bus"
	"github.com/motionstudio/platform/services/identity-svc/internal/cache"
	"github.com/motionstudio/platform/services/identity-svc/internal/config"
	"github.com/motionstudio/platform/services/identity-svc/internal/httpapi/accountapi"
	"github.com/motionstudio/platform/services/identity-svc/internal/outbound/domaincheck"
	"github.com/motionstudio/platform/services/identity-svc/internal/outbound/redissession"
	"github.com/motionstudio/platform/services/identity-svc/internal/store"
	"github.com/motionstudio/platform/services/identity-svc/internal/tenant"
	"github.com/motionstudio/platform/services/identity-svc/internal/webhook"
)

// newAccountHandler wires the account side of the service (users, tenants, API keys and
// webhooks) on a's database, bus and Redis, and adds its consumers and sweepers to a's workers.
func newAccountHandler(a *App, cfg config.Config, key ed25519.PrivateKey, writer *outbox.Writer, limiter *redisx.Limiter, sessions *redissession.Store) (*accountapi.Handler, error) {
	acfg := cfg.Account
	if err := apikey.ValidBrand(acfg.APIKeys.Brand); err != nil {
		return nil, err
	}
	schedule, err := retrySchedule(acfg.Webhooks.RetrySchedule)
	if err != nil {
		return nil, err
	}
	sealer, err := newSealer(cfg, key, sealWebhooks)
	if err != nil {
		return nil, err
	}
	checker := domaincheck.New(domaincheck.Options{
		DNSServer: acfg.DomainDNSServer, HTTPAddr: acfg.DomainCheckHTTPAddr, AllowLoopback: acfg.OutboundAllowLoopback,
	})
	keyStore := cache.NewKeys(store.NewAPIKeys(a.DB, writer), acfg.APIKeys.CacheTTL, min(acfg.APIKeys.CacheTTL, 10*time.Second), acfg.APIKeys.CacheKeys, service.Now)
	keys := apikey.NewService(keyStore, apikey.NewCounter(), apikey.NewLocalLimiter(keyLeaser{limiter}, service.Now), acfg.APIKeys.Brand, service.Now, service.NewID)
	tenants := tenant.NewService(store.NewTenants(a.DB, writer, a.heldAccounts), checker, tenant.Options{
		Now: service.Now, NewID: service.NewID, NewToken: challengeToken, ChallengeTTL: acfg.DomainChallengeTTL,
		TokenLife: revokedFor(cfg), Hooks: []tenant.StatusHook{sessions, forgetTenantKeys(keyStore)},
	})
	hookStore := store.NewWebhooks(a.DB, writer)
	hooks := webhook.NewService(hookStore, sealer, func(raw string) error {
		return outbound.ValidateURL(raw, acfg.OutboundAllowLoopback)
	}, slices.Collect(maps.Keys(events.WebhookEvents())), service.Now, service.NewID)
	sender := bus.NewSender(outbound.New(outbound.Options{
		Timeout: acfg.Webhooks.Timeout, MaxBodyBytes: webhook.MaxStoredBody, AllowLoopback: acfg.OutboundAllowLoopback,
		UserAgent: "MotionStudio-Webhooks/1.0", DNSServer: acfg.OutboundDNSServer,
	}), a.log)
	deliveries, err := newCountedQueue(hookStore, a.Server.Registry)
	if err != nil {
		return nil, err
	}
	consumers := bus.NewWebhooks(a.Bus, hookStore, webhook.NewDeliverer(deliveries, sender, sealer, schedule, service.Now, service.NewID), a.log, service.NewID, service.Now)
	a.Workers = append(a.Workers,
		service.WorkerFunc(func(ctx context.Context) error {
			return service.Every(ctx, acfg.DomainCheckInterval, func(ctx context.Context) {
				if _, err := tenants.CheckPending(ctx, 100); err != nil {
					a.log.WarnContext(ctx, "domain check failed", "error", err)
				}
			})
		}),
		service.WorkerFunc(func(ctx context.Context) error {
			err := service.Every(ctx, acfg.APIKeys.UsageFlushInterval, func(ctx context.Context) {
				if err := keys.FlushUsage(ctx); err != nil {
					a.log.WarnContext(ctx, "api key usage flush failed", "error", err)
				}
			})
			if ferr := keys.FlushUsage(context.WithoutCancel(ctx)); ferr != nil {
				a.log.WarnContext(ctx, "api key usage flush failed", "error", ferr)
			}
			return err
		}),
		service.WorkerFunc(func(ctx context.Context) error { return bus.ForgetRevokedKeys(ctx, a.Bus, a.log, keyStore.Forget) }),
		service.WorkerFunc(func(ctx context.Context) error { return bus.ForgetTenantKeys(ctx, a.Bus, a.log, keyStore.ForgetTenant) }),
		service.WorkerFunc(consumers.FanOut),
		service.WorkerFunc(func(ctx context.Context) error { return consumers.Deliveries(ctx, acfg.Webhooks.Concurrency) }),
		service.WorkerFunc(func(ctx context.Context) error {
			return service.Every(ctx, acfg.Webhooks.SweepInterval, func(ctx context.Context) {
				if _, err := hookStore.WakeDue(ctx, service.Now(), 5*time.Minute, 500); err != nil {
					a.log.WarnContext(ctx, "webhook sweep failed", "error", err)
				}
			})
		}),
	)
	return accountapi.NewHandler(accountapi.Deps{
		Users:    account.NewUsers(store.NewUsers(a.DB, writer, a.heldAccounts), sessions, service.Now),
		Tenants:  tenants,
		APIKeys:  keys,
		Webhooks: hooks,
		Currency: cfg.BalanceCurrency,
	}), nil
}

// forgetTenantKeys drops a tenant's keys from this process's cache as soon as its status is
// set here; the other replicas hear it through bus.ForgetTenantKeys.
func forgetTenantKeys(keys *cache.Keys) tenant.StatusHook {
	return tenant.StatusHookFunc(func(_ context.Context, t *tenant.Tenant) error {
		keys.ForgetTenant(t.ID)
		return nil
	})
}

// retrySchedule parses a comma-separated list of delays.
func retrySchedule(spec string) ([]time.Duration, error) {
	var out []time.Duration
	for part := range strings.SplitSeq(spec, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("app: WEBHOOK_RETRY_SCHEDULE: %q is not a positive duration", part)
		}
		out = append(out, d)
	}
	return out, nil
}

// keyLeaser takes batches of an API key's per-minute rate from the service's GCRA limiter,
// which every replica shares.
type keyLeaser struct{ l *redisx.Limiter }

// Take grants up to n events of key under perMinute.
func (k keyLeaser) Take(ctx context.Context, key string, perMinute, n int) (int, time.Duration, error) {
	return k.l.Take(ctx, key, redisx.PerMinute(perMinute), n)
}

// challengeToken is 128 random bits as 32 hex characters.
func challengeToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
