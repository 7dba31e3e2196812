// Command benchidentity measures identity-svc's hot paths with vegeta (used as a library so
// that single-use refresh tokens can be fed back into the attack): API-key validation over
// 10,000 keys (one made through the API, the rest written straight into the bench database),
// token refresh of one session each of 2×workers users, and login offered at twice the machine's
// argon2id limit (the rate of one hash per core at once, measured for two seconds), which the
// service must serve near that limit and refuse the excess of fast. Each line
// shows its share of the ceiling (-ceiling, req/s of the trivial handler in the same run).
// scripts/bench-identity.sh starts the service and passes the credentials.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	"golang.org/x/crypto/argon2"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/pgdb"
)

type options struct {
	base, adminToken, serviceToken, tenantID, tenantSlug, email, password, dsn string
	duration                                                                   time.Duration
	workers                                                                    uint64
	keys                                                                       int
	ceiling                                                                    float64
	pprof, out                                                                 string
}

func main() {
	var o options
	flag.StringVar(&o.base, "base", "http://127.0.0.1:18091", "identity-svc base URL")
	flag.StringVar(&o.adminToken, "admin-token", "", "access token of a tenant administrator")
	flag.StringVar(&o.serviceToken, "service-token", "", "service token (for /v1/api-keys/validate)")
	flag.StringVar(&o.tenantID, "tenant-id", "", "tenant id")
	flag.StringVar(&o.tenantSlug, "tenant-slug", "", "tenant slug")
	flag.StringVar(&o.email, "email", "", "login email")
	flag.StringVar(&o.password, "password", "", "login password")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "length of each attack")
	flag.Uint64Var(&o.workers, "workers", 64, "concurrent workers")
	flag.StringVar(&o.dsn, "dsn", "", "the service's bench database, where the extra API keys are written")
	flag.IntVar(&o.keys, "keys", 10000, "API keys the validation attack draws from")
	flag.Float64Var(&o.ceiling, "ceiling", 0, "req/s of the trivial handler in the same run")
	flag.StringVar(&o.pprof, "pprof", "", "the service's profile address; each attack's CPU profile goes to -out/<attack>.pprof")
	flag.StringVar(&o.out, "out", ".", "directory of the profiles")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "benchidentity:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	limit, hashes, took := argon2Limit()
	fmt.Printf("%-26s %9.1f hashes/s   (%d hashes of argon2id m=19MiB,t=2,p=1 in %.1f s on %d cores at once)\n",
		"argon2id-limit", limit, hashes, took.Seconds(), runtime.NumCPU())

	secrets, err := createKeys(o)
	if err != nil {
		return err
	}
	bodies := make([][]byte, len(secrets))
	for i, secret := range secrets {
		bodies[i], _ = json.Marshal(map[string]string{"key_prefix": prefixOf(secret), "key_hash": hashOf(secret), "ip_address": "127.0.0.1"})
	}
	// One validation of every key first, as a gateway's steady state has seen its keys before.
	var warmed atomic.Int64
	warm := func(t *vegeta.Target) error {
		i := warmed.Add(1) - 1
		if i >= int64(len(bodies)) {
			return vegeta.ErrNoTargets
		}
		*t = vegeta.Target{Method: http.MethodPost, URL: o.base + "/v1/api-keys/validate", Body: bodies[i], Header: jsonHeader(o.serviceToken)}
		return nil
	}
	for range vegeta.NewAttacker(vegeta.Workers(o.workers), vegeta.MaxWorkers(o.workers), vegeta.KeepAlive(true)).
		Attack(warm, vegeta.ConstantPacer{Freq: 0, Per: time.Second}, 0, "warm") {
	}
	validate := func(t *vegeta.Target) error {
		*t = vegeta.Target{Method: http.MethodPost, URL: o.base + "/v1/api-keys/validate", Body: bodies[mrand.IntN(len(bodies))], Header: jsonHeader(o.serviceToken)}
		return nil
	}
	report(o, "api-key-validate", attack(o, "api-key-validate", validate, 0, nil))

	login, _ := json.Marshal(map[string]string{"tenant_slug": o.tenantSlug, "email": o.email, "password": o.password})
	m := attack(o, "login", static(o.base+"/v1/auth/login", "", login), 2*limit, nil)
	report(o, "login (offered 2x limit)", m)
	served := float64(m.StatusCodes["200"]) / m.Duration.Seconds()
	fmt.Printf("%-26s %9.1f logins/s  %5.1f%% of the argon2id limit   refused fast: %d (503 with Retry-After)\n",
		"login served", served, 100*served/limit, m.StatusCodes["503"])

	// One session for each of 2×workers users, so that refreshes read as many users.
	emails, err := copyUser(o, int(2*o.workers)) // #nosec G115 -- a flag of a few hundred
	if err != nil {
		return err
	}
	pool := make(chan string, 4*o.workers)
	for _, email := range emails {
		body, _ := json.Marshal(map[string]string{"tenant_slug": o.tenantSlug, "email": email, "password": o.password})
		tok, err := loginOnce(o, body)
		if err != nil {
			return err
		}
		pool <- tok
	}
	refresh := func(t *vegeta.Target) error {
		body, _ := json.Marshal(map[string]string{"refresh_token": <-pool})
		*t = vegeta.Target{Method: http.MethodPost, URL: o.base + "/v1/auth/refresh", Body: body, Header: jsonHeader("")}
		return nil
	}
	recycle := func(r *vegeta.Result) {
		var out struct {
			RefreshToken string `json:"refresh_token"`
		}
		if r.Code == http.StatusOK && json.Unmarshal(r.Body, &out) == nil && out.RefreshToken != "" {
			pool <- out.RefreshToken
		}
	}
	report(o, "refresh", attack(o, "refresh", refresh, 0, recycle))
	return nil
}

// argon2Limit measures the machine's argon2id rate with the service's parameters as the
// service's gate hashes: one hash per core at once, for at least two seconds. It answers the
// rate, the hashes and the time they took.
func argon2Limit() (float64, int, time.Duration) {
	const least = 2 * time.Second
	salt := []byte("0123456789abcdef")
	var (
		hashes atomic.Int64
		wg     sync.WaitGroup
	)
	start := time.Now()
	for range runtime.NumCPU() {
		wg.Go(func() {
			for time.Since(start) < least {
				argon2.IDKey([]byte("correct horse battery staple"), salt, 2, 19*1024, 1, 32)
				hashes.Add(1)
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	n := int(hashes.Load())
	return float64(n) / took.Seconds(), n, took
}

func jsonHeader(token string) http.Header {
	h := http.Header{"Content-Type": {"application/json"}}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	return h
}

func static(url, token string, body []byte) vegeta.Targeter {
	return vegeta.NewStaticTargeter(vegeta.Target{Method: http.MethodPost, URL: url, Body: body, Header: jsonHeader(token)})
}

// attack runs one vegeta attack at rate requests per second, or as fast as the workers allow
// when rate is 0; each result goes to after, if set. With -pprof it profiles the service
// meanwhile.
func attack(o options, name string, tr vegeta.Targeter, rate float64, after func(*vegeta.Result)) *vegeta.Metrics {
	if o.pprof != "" {
		done := profile(o, name)
		defer func() { <-done }()
	}
	atk := vegeta.NewAttacker(vegeta.Workers(o.workers), vegeta.MaxWorkers(o.workers), vegeta.KeepAlive(true))
	pacer := vegeta.Pacer(vegeta.ConstantPacer{Freq: 0, Per: time.Second})
	if rate > 0 {
		pacer = vegeta.ConstantPacer{Freq: int(rate + 0.5), Per: time.Second}
	}
	var m vegeta.Metrics
	for r := range atk.Attack(tr, pacer, o.duration, "bench") {
		m.Add(r)
		if after != nil {
			after(r)
		}
	}
	m.Close()
	return &m
}

// profile fetches a CPU profile of the attack's length but its last second into
// -out/<name>.pprof; the channel closes when it is written.
func profile(o options, name string) <-chan struct{} {
	done := make(chan struct{})
	seconds := max(1, int(o.duration.Seconds())-1)
	go func() {
		defer close(done)
		resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", o.pprof, seconds))
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchidentity: profile:", err)
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if err := os.WriteFile(o.out+"/identity-"+name+".pprof", b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "benchidentity: profile:", err)
		}
	}()
	return done
}

func report(o options, name string, m *vegeta.Metrics) {
	share := "  -  "
	if o.ceiling > 0 {
		share = fmt.Sprintf("%5.1f%%", 100*m.Throughput/o.ceiling)
	}
	fmt.Printf("%-26s %9.0f req/s  %s of ceiling   p50 %8.3f ms   p99 %8.3f ms   success %.2f%%   codes %v\n",
		name, m.Throughput, share, ms(m.Latencies.P50), ms(m.Latencies.P99), m.Success*100, m.StatusCodes)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// createKeys creates one API key for the tenant through the API and writes o.keys-1 more of
// the same shape straight into the database (the API allows 50 active keys per tenant), and
// returns their secrets.
func createKeys(o options) ([]string, error) {
	body := `{"name":"bench","scopes":["templates:read"],"rate_limit_rpm":100000}`
	var out struct {
		SecretKey string `json:"secret_key"`
	}
	if err := post(o.base+"/v1/tenants/"+o.tenantID+"/api-keys", o.adminToken, []byte(body), http.StatusCreated, &out); err != nil {
		return nil, fmt.Errorf("create api key: %w", err)
	}
	secrets := []string{out.SecretKey}
	if o.keys <= 1 {
		return secrets, nil
	}
	var prefixes, last4s, hashes []string
	for range o.keys - 1 {
		s := "ms_live_" + base62(38)
		secrets = append(secrets, s)
		prefixes, last4s, hashes = append(prefixes, prefixOf(s)), append(last4s, s[len(s)-4:]), append(hashes, hashOf(s))
	}
	err := inBenchDB(o, func(db *gorm.DB) error {
		return db.Exec(`INSERT INTO api_keys (id, tenant_id, name, environment, key_prefix, last4, key_hash, scopes, rate_limit_rpm)
		SELECT gen_random_uuid(), ?, 'bench ' || k.n, 'Live', k.prefix, k.last4, k.hash, '["templates:read"]', 100000
		FROM unnest(?::text[], ?::text[], ?::text[]) WITH ORDINALITY AS k (prefix, last4, hash, n)`,
			o.tenantID, pgArray(prefixes), pgArray(last4s), pgArray(hashes)).Error
	})
	if err != nil {
		return nil, fmt.Errorf("insert api keys: %w", err)
	}
	return secrets, nil
}

// copyUser writes n copies of the login user (same tenant and password hash, emails
// "r<i>-<email>") straight into the database and answers their emails.
func copyUser(o options, n int) ([]string, error) {
	var emails []string
	err := inBenchDB(o, func(db *gorm.DB) error {
		return db.Raw(`INSERT INTO users (id, tenant_id, email, email_verified, full_name, register_mode, password_hash)
		SELECT gen_random_uuid(), u.tenant_id, 'r' || g || '-' || u.email, u.email_verified, u.full_name, u.register_mode, u.password_hash
		FROM users u CROSS JOIN generate_series(1, ?) AS g
		WHERE u.tenant_id = ? AND u.email = ?
		RETURNING email`, n, o.tenantID, o.email).Scan(&emails).Error
	})
	if err != nil {
		return nil, fmt.Errorf("copy the login user: %w", err)
	}
	if len(emails) != n {
		return nil, fmt.Errorf("copy the login user: %d copies, want %d", len(emails), n)
	}
	return emails, nil
}

// inBenchDB runs fn over a connection to the service's bench database (-dsn).
func inBenchDB(o options, fn func(db *gorm.DB) error) error {
	if o.dsn == "" {
		return errors.New("-dsn is required for the extra API keys and the refresh users")
	}
	ctx := context.Background()
	db, err := pgdb.Open(ctx, pgdb.Config{DSN: o.dsn, MaxOpenConns: 1, MaxIdleConns: 1})
	if err != nil {
		return err
	}
	defer pgdb.Close(db)
	return fn(db.WithContext(ctx))
}

// pgArray writes values without quotes or backslashes as a Postgres array literal (gorm would
// expand a slice into a list). Every element is quoted: an unquoted NULL (any case), which a
// random last4 can be, would be a null element.
func pgArray(values []string) string { return `{"` + strings.Join(values, `","`) + `"}` }

// base62 is n random characters of [0-9A-Za-z].
func base62(n int) string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b := make([]byte, n)
	for i := range b {
		v, _ := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		b[i] = alphabet[v.Int64()]
	}
	return string(b)
}

func loginOnce(o options, body []byte) (string, error) {
	var out struct {
		RefreshToken string `json:"refresh_token"`
	}
	if err := post(o.base+"/v1/auth/login", "", body, http.StatusOK, &out); err != nil {
		return "", fmt.Errorf("login: %w", err)
	}
	return out.RefreshToken, nil
}

func post(url, token string, body []byte, want int, out any) error {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header = jsonHeader(token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return errors.New(resp.Status + ": " + string(b))
	}
	return json.Unmarshal(b, out)
}

// prefixOf is the key_prefix the gateway sends: brand, environment and the first 8 random
// characters ("ms_live_AbCdEfGh").
func prefixOf(secret string) string {
	parts := strings.SplitN(secret, "_", 3)
	if len(parts) != 3 || len(parts[2]) < 8 {
		return secret
	}
	return parts[0] + "_" + parts[1] + "_" + parts[2][:8]
}

// hashOf is the key_hash the gateway sends: hex SHA-256 of the whole secret.
func hashOf(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}
