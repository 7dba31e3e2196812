package app

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"log/slog"
	"regexp"
	"time"

	"github.com/motionstudio/platform/pkg/jobs"
	"github.com/motionstudio/platform/pkg/outbound"
	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/redisx"
	"github.com/motionstudio/platform/pkg/service"
	events "github.com/motionstudio/platform/proto-events"
	"github.com/motionstudio/platform/services/identity-svc/internal/auth"
	"github.com/motionstudio/platform/services/identity-svc/internal/config"
	"github.com/motionstudio/platform/services/identity-svc/internal/httpapi/authapi"
	"github.com/motionstudio/platform/services/identity-svc/internal/notify"
	"github.com/motionstudio/platform/services/identity-svc/internal/outbound/oauth"
	"github.com/motionstudio/platform/services/identity-svc/internal/outbound/redischallenge"
	"github.com/motionstudio/platform/services/identity-svc/internal/outbound/redissession"
	"github.com/motionstudio/platform/services/identity-svc/internal/outbound/sender"
	"github.com/motionstudio/platform/services/identity-svc/internal/password"
	"github.com/motionstudio/platform/services/identity-svc/internal/push"
	"github.com/motionstudio/platform/services/identity-svc/internal/store"
	"github.com/motionstudio/platform/services/identity-svc/internal/token"
)

// newAuthHandler builds the Auth tag's handler and the session store whose revocations the
// service's policies check (authapi.LiveSessions).
func newAuthHandler(a *App, cfg config.Config, key ed25519.PrivateKey, issuer *token.Issuer, limiter *redisx.Limiter) (*authapi.Handler, *redissession.Store, error) {
	c := cfg.Auth
	notifier, err := newNotifier(a, c)
	if err != nil {
		return nil, nil, err
	}
	sealer, err := newSealer(cfg, key, sealMFA)
	if err != nil {
		return nil, nil, err
	}
	providers, err := newOAuthProviders(c)
	if err != nil {
		return nil, nil, err
	}
	writer := outbox.NewWriter(events.SourceIdentity)
	users := store.NewUsers(a.DB, writer, a.heldAccounts)
	authStore := store.NewAuth(a.DB, users)
	sessions := redissession.NewStore(a.rdb, cfg.Redis.KeyPrefix, c.RefreshTokenTTL, revokedFor(cfg),
		store.NewSessionEvents(a.DB, writer, revokedFor(cfg)))
	resets := store.NewResetJobs(a.DB)
	svc, err := auth.NewService(auth.Deps{
		Users:    a.heldAccounts.Users(users),
		Tenants:  store.NewTenants(a.DB, writer, a.heldAccounts),
		Sessions: sessions,
		Hasher:   password.NewHasher(password.Default),
		Tokens:   issuer,
		Limiter:  authLimiter{limiter},
		Limits: auth.Limits{
			LoginPerIP:         auth.PerMinute(c.LoginPerIP),
			LoginPerAccount:    auth.PerMinute(c.LoginPerAccount),
			LoginPerAccountAll: auth.PerMinute(c.LoginPerAccountAllAddresses),
			LoginPerTenant:     auth.PerMinute(c.LoginPerTenant),
			RegisterPerIP:      auth.PerMinute(c.RegisterPerIP),
			RegisterPerTenant:  auth.PerMinute(c.RegisterPerTenant),
			VerifyPerIP:        auth.PerMinute(c.VerifyPerIP),
			ResetPerIP:         auth.PerMinute(c.ResetPerIP),
			ResetPerAccount:    auth.PerMinute(c.ResetPerAccount),
			ResetPerTenant:     auth.PerMinute(c.ResetPerTenant),
		},
		Challenges: redischallenge.NewStore(a.rdb, cfg.Redis.KeyPrefix),
		Notifier:   notifier,
		Resets:     resets,
		Messages: auth.Messages{
			LinkBase: c.AppBaseURL, EmailCodeTTL: c.EmailCodeTTL, PhoneCodeTTL: c.PhoneCodeTTL,
			ResetTTL: c.ResetTTL, MaxAttempts: c.CodeMaxAttempts,
		},
		Factors: authStore,
		Sealer:  sealer,
		MFA:     auth.MFAConfig{Issuer: c.MFAIssuer, TokenTTL: c.MFATokenTTL},

		OAuth:      providers,
		OAuthLinks: authStore,
		Log:        a.log,
		Grace:      c.RefreshReuseGrace,
		Now:        service.Now,
		NewID:      service.NewID,
	})
	if err != nil {
		return nil, nil, err
	}
	if c.ResetWorker {
		a.Workers = append(a.Workers,
			service.WorkerFunc(func(ctx context.Context) error { return svc.RunResets(ctx, c.ResetPoll) }),
			service.WorkerFunc(func(ctx context.Context) error {
				return jobs.RunRequeuer(ctx, c.ResetPoll, a.log, "password resets", func(ctx context.Context) (int, error) {
					return resets.Requeue(ctx, service.Now(), auth.ResetLease, resetRequeueBatch)
				})
			}))
	}
	pushes := push.NewService(store.NewPushSubscriptions(a.DB), service.Now, service.NewID)
	return authapi.NewHandler(authapi.Deps{Auth: svc, Push: pushes}), sessions, nil
}

// revokedFor is how long a revoked session, or a suspended tenant's cutoff, is remembered: as
// long as any access token issued before it can live, here and (through the events) in the
// services that verify them.
func revokedFor(cfg config.Config) time.Duration { return cfg.AccessTokenTTL + time.Minute }

// resetRequeueBatch bounds the password-reset requests one sweep queues again.
const resetRequeueBatch = 100

// newNotifier picks the message senders: the development notifier (log and
// notification_outbox, and email also over SMTP when SMTP_ADDR is set) or SMTP and the SMS gateway.
func newNotifier(a *App, c config.Auth) (notify.Notifier, error) {
	smtp := sender.NewSMTP(sender.SMTPConfig{Addr: c.SMTPAddr, From: c.SMTPFrom, Username: c.SMTPUsername, Password: c.SMTPPassword})
	switch c.NotifyMode {
	case "dev":
		dev := sender.NewDev(a.log.With(slog.String("component", "notify")), store.NewNotifications(a.DB))
		if c.SMTPAddr != "" {
			return notify.Router{Email: sender.Tee{dev, smtp}, SMS: dev}, nil
		}
		return notify.Router{Email: dev, SMS: dev}, nil
	case "live":
		if c.SMTPAddr == "" || c.SMSURL == "" {
			return nil, fmt.Errorf("app: NOTIFY_MODE=live needs SMTP_ADDR and SMS_GATEWAY_URL")
		}
		return notify.Router{
			Email: smtp,
			SMS: sender.NewSMSGateway(sender.SMSConfig{URL: c.SMSURL, APIKey: c.SMSAPIKey, From: c.SMSFrom},
				outbound.New(outbound.Options{AllowLoopback: c.SMSAllowLoopback, UserAgent: Name})),
		}, nil
	default:
		return nil, fmt.Errorf("app: NOTIFY_MODE must be dev or live, got %q", c.NotifyMode)
	}
}

var providerName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// newOAuthProviders builds the configured OAuth login providers (slots A and B), keyed by name.
func newOAuthProviders(c config.Auth) (map[string]auth.OAuthProvider, error) {
	out := map[string]auth.OAuthProvider{}
	for _, p := range []oauth.Config{oauth.Config(c.OAuthA), oauth.Config(c.OAuthB)} {
		if p.Name == "" {
			continue
		}
		if !providerName.MatchString(p.Name) {
			return nil, fmt.Errorf("app: OAuth provider name %q must be 1-32 lower-case letters, digits, - or _", p.Name)
		}
		if _, dup := out[p.Name]; dup {
			return nil, fmt.Errorf("app: OAuth provider %q is configured twice", p.Name)
		}
		if p.TokenURL == "" || p.UserInfoURL == "" || p.ClientID == "" {
			return nil, fmt.Errorf("app: OAuth provider %q needs a client id, a token URL and a userinfo URL", p.Name)
		}
		out[p.Name] = oauth.New(p, c.OAuthTimeout)
	}
	return out, nil
}

// authLimiter checks auth's rates with the Redis limiter.
type authLimiter struct{ l *redisx.Limiter }

func (l authLimiter) Check(ctx context.Context, key string, lim auth.Limit) error {
	return l.l.Check(ctx, key, redisx.Limit(lim))
}
