package config

import "time"

// Auth holds the settings of registration, login, sessions and refresh tokens.
type Auth struct {
	// RefreshTokenTTL is how long an unused session (and its refresh token) lives; every refresh
	// extends it.
	RefreshTokenTTL time.Duration `env:"REFRESH_TOKEN_TTL" default:"720h"`
	// RefreshReuseGrace is how long a replaced refresh token is still answered the successor it
	// was rotated to (a retry that lost its answer, or a concurrent tab). Any other reuse
	// revokes the session.
	RefreshReuseGrace time.Duration `env:"REFRESH_REUSE_GRACE" default:"10s"`
	// RefreshCacheUsers bounds how many users (with their tenants) each process keeps in memory
	// for refreshes (internal/cache, some 2 KB each); a change on any replica drops them
	// everywhere (LISTEN/NOTIFY). Zero reads every refresh's user from the database.
	RefreshCacheUsers int `env:"REFRESH_CACHE_USERS" default:"20000"`

	// LoginPerAccount limits login attempts on one account from one client address per minute
	// (and password changes and MFA codes per account).
	LoginPerAccount int `env:"LOGIN_RATE_LIMIT_ACCOUNT_PER_MIN" default:"10"`
	// LoginPerAccountAllAddresses, looser, limits login attempts on one account from every
	// address together per minute, so a guesser elsewhere cannot lock the owner out.
	LoginPerAccountAllAddresses int `env:"LOGIN_RATE_LIMIT_ACCOUNT_ALL_ADDRESSES_PER_MIN" default:"100"`

	// LoginPerIP limits login attempts (password and OAuth) from one client address per minute.
	LoginPerIP int `env:"LOGIN_RATE_LIMIT_IP_PER_MIN" default:"30"`
	// LoginPerTenant limits login attempts on all of one tenant's accounts together per minute.
	LoginPerTenant int `env:"LOGIN_RATE_LIMIT_TENANT_PER_MIN" default:"600"`
	// RegisterPerIP limits registrations from one client address per minute.
	RegisterPerIP int `env:"REGISTER_RATE_LIMIT_IP_PER_MIN" default:"10"`
	// RegisterPerTenant limits registrations into one tenant per minute.
	RegisterPerTenant int `env:"REGISTER_RATE_LIMIT_TENANT_PER_MIN" default:"120"`
	// VerifyPerIP limits email, phone and MFA code checks from one client address per minute.
	VerifyPerIP int `env:"VERIFY_RATE_LIMIT_IP_PER_MIN" default:"30"`
	// ResetPerIP limits password-reset requests from one client address per minute.
	ResetPerIP int `env:"RESET_RATE_LIMIT_IP_PER_MIN" default:"10"`
	// ResetPerAccount limits password-reset requests for one account per minute, so that nobody
	// floods a person's inbox.
	ResetPerAccount int `env:"RESET_RATE_LIMIT_ACCOUNT_PER_MIN" default:"3"`
	// ResetPerTenant limits password-reset requests into one tenant per minute.
	ResetPerTenant int `env:"RESET_RATE_LIMIT_TENANT_PER_MIN" default:"120"`

	// AppBaseURL is the web app's address that links in verification and reset messages
	// point to.
	AppBaseURL string `env:"APP_BASE_URL" default:"http://localhost:3000"`
	// EmailCodeTTL is how long an email verification link and code stay valid.
	EmailCodeTTL time.Duration `env:"EMAIL_CODE_TTL" default:"24h"`
	// PhoneCodeTTL is how long a phone verification or SMS MFA code stays valid.
	PhoneCodeTTL time.Duration `env:"PHONE_CODE_TTL" default:"15m"`
	// ResetTTL is how long a password-reset link and code stay valid.
	ResetTTL time.Duration `env:"PASSWORD_RESET_TTL" default:"30m"`
	// ResetWorker runs the password-reset worker in this process. A process without it still
	// accepts reset requests; they wait in the database for a process that runs it.
	ResetWorker bool `env:"PASSWORD_RESET_WORKER" default:"true"`
	// ResetPoll is how often the password-reset worker looks for requests other processes
	// accepted and queues again those whose worker stopped.
	ResetPoll time.Duration `env:"PASSWORD_RESET_POLL_INTERVAL" default:"2s"`
	// CodeMaxAttempts is how many wrong codes a one-time challenge takes before it is burnt.
	CodeMaxAttempts int `env:"CODE_MAX_ATTEMPTS" default:"5"`

	// NotifyMode is "dev" (messages go to the log and the notification_outbox table, and email
	// also over SMTP when SMTP_ADDR is set, as make dev sets it to the local MailHog) or "live"
	// (email over SMTP, SMS through the HTTP gateway; both must be configured).
	NotifyMode string `env:"NOTIFY_MODE" default:"dev"`
	// SMTPAddr is the SMTP server ("host:port") that sends email: always in live mode, and in dev mode
	// as well when set (make dev points it at the local MailHog).
	SMTPAddr string `env:"SMTP_ADDR"`
	// SMTPFrom is the sender address of every email.
	SMTPFrom string `env:"SMTP_FROM" default:"no-reply@motionstudio.local"`
	// SMTPUsername is the SMTP login; empty sends without authentication.
	SMTPUsername string `env:"SMTP_USERNAME"`
	// SMTPPassword is the SMTP password.
	SMTPPassword string `env:"SMTP_PASSWORD"`
	// SMSURL is the HTTP SMS gateway's endpoint that sends text messages in live mode.
	SMSURL string `env:"SMS_GATEWAY_URL"`
	// SMSAPIKey is the SMS gateway's API key.
	SMSAPIKey string `env:"SMS_GATEWAY_API_KEY"`
	// SMSFrom is the sender name or number of every text message.
	SMSFrom string `env:"SMS_FROM" default:"MotionStudio"`
	// SMSAllowLoopback lets SMS_GATEWAY_URL be a loopback address (local gateways and tests).
	SMSAllowLoopback bool `env:"SMS_GATEWAY_ALLOW_LOOPBACK"`

	// EncryptionKeys is the encryption key ring: comma-separated id:base64key entries (ids of 1
	// to 32 letters, digits, '.', '_' or '-'; keys of 32 bytes), for example
	// "2026-11:<key>,default:<old key>". The first key seals TOTP secrets, webhook secrets and
	// signing keys with AES-256-GCM, every key opens; values sealed under a single ENCRYPTION_KEY
	// open under the id "default". `identity-svc admin reseal` moves every value under the first
	// key, after which the others can be removed.
	EncryptionKeys string `env:"ENCRYPTION_KEYS"`
	// EncryptionKey (base64, 32 bytes) is the key with the id "default", after the keys of
	// ENCRYPTION_KEYS when those are set too. When neither it nor ENCRYPTION_KEYS is set, a key is
	// derived from the signing key with HKDF-SHA256; production sets its own so that the two
	// keys rotate independently.
	EncryptionKey string `env:"ENCRYPTION_KEY"`
	// MFAIssuer is the issuer name authenticator apps show next to a TOTP factor.
	MFAIssuer string `env:"MFA_ISSUER" default:"Motion Studio"`
	// MFATokenTTL is how long the mfa_token of a login that needs a second factor may be used
	// to complete the challenge.
	MFATokenTTL time.Duration `env:"MFA_TOKEN_TTL" default:"5m"`

	// Two OAuth 2.0 / OpenID Connect login providers; a slot is enabled by its name, which is the
	// {provider} of POST /v1/auth/login/oauth/{provider} and the users' register_mode.
	OAuthA OAuthProviderA
	OAuthB OAuthProviderB
	// OAuthTimeout bounds each request to a login provider's token and user-info endpoints.
	OAuthTimeout time.Duration `env:"OAUTH_TIMEOUT" default:"10s"`
}

// OAuthProviderA is the first OAuth login provider slot.
type OAuthProviderA struct {
	// Name is the provider's path name in /v1/auth/login/oauth/{provider}; empty disables the slot.
	Name string `env:"OAUTH_A_NAME"`
	// ClientID is the client id registered with the provider.
	ClientID string `env:"OAUTH_A_CLIENT_ID"`
	// ClientSecret is the client secret registered with the provider.
	ClientSecret string `env:"OAUTH_A_CLIENT_SECRET"`
	// TokenURL is the provider's token endpoint, where the authorization code is exchanged.
	TokenURL string `env:"OAUTH_A_TOKEN_URL"`
	// UserInfoURL is the provider's user-info endpoint, which names the signed-in account.
	UserInfoURL string `env:"OAUTH_A_USERINFO_URL"`
	// RedirectURI is sent with the code exchange when the login request names none; it must
	// match the one the authorization request used.
	RedirectURI string `env:"OAUTH_A_REDIRECT_URI"`
}

// OAuthProviderB is the second OAuth login provider slot.
type OAuthProviderB struct {
	// Name is the provider's path name in /v1/auth/login/oauth/{provider}; empty disables the slot.
	Name string `env:"OAUTH_B_NAME"`
	// ClientID is the client id registered with the provider.
	ClientID string `env:"OAUTH_B_CLIENT_ID"`
	// ClientSecret is the client secret registered with the provider.
	ClientSecret string `env:"OAUTH_B_CLIENT_SECRET"`
	// TokenURL is the provider's token endpoint, where the authorization code is exchanged.
	TokenURL string `env:"OAUTH_B_TOKEN_URL"`
	// UserInfoURL is the provider's user-info endpoint, which names the signed-in account.
	UserInfoURL string `env:"OAUTH_B_USERINFO_URL"`
	// RedirectURI is sent with the code exchange when the login request names none; it must
	// match the one the authorization request used.
	RedirectURI string `env:"OAUTH_B_REDIRECT_URI"`
}
