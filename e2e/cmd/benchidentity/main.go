// Command benchidentity measures identity-svc's hot paths with vegeta (used as a library so
// that single-use refresh tokens can be fed back into the attack): API-key validation, token
// refresh and login, and prints the machine's argon2id limit (cores / one hash's time) to read
// the login figure against. scripts/bench.sh starts the service and passes the credentials.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	"golang.org/x/crypto/argon2"
)

type options struct {
	base, adminToken, serviceToken, tenantID, tenantSlug, email, password string
	duration                                                              time.Duration
	workers                                                               uint64
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
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "benchidentity:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	hash := argon2Time()
	fmt.Printf("%-24s %10.1f hashes/s   (%d cores / %.1f ms per argon2id m=19MiB,t=2,p=1 hash)\n",
		"argon2id-limit", float64(runtime.NumCPU())/hash.Seconds(), runtime.NumCPU(), float64(hash.Microseconds())/1000)

	secret, err := createKey(o)
	if err != nil {
		return err
	}
	validate, _ := json.Marshal(map[string]string{"key_prefix": prefixOf(secret), "key_hash": hashOf(secret), "ip_address": "127.0.0.1"})
	report("api-key-validate", attack(o, static(o.base+"/v1/api-keys/validate", o.serviceToken, validate), nil))

	login, _ := json.Marshal(map[string]string{"tenant_slug": o.tenantSlug, "email": o.email, "password": o.password})
	report("login", attack(o, static(o.base+"/v1/auth/login", "", login), nil))

	pool := make(chan string, 4*o.workers)
	for range 2 * o.workers {
		tok, err := loginOnce(o, login)
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
	report("refresh", attack(o, refresh, recycle))
	return nil
}

// argon2Time is the mean time of one hash with the service's parameters.
func argon2Time() time.Duration {
	const n = 10
	salt := []byte("0123456789abcdef")
	start := time.Now()
	for range n {
		argon2.IDKey([]byte("correct horse battery staple"), salt, 2, 19*1024, 1, 32)
	}
	return time.Since(start) / n
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

// attack runs one vegeta attack as fast as the workers allow; each result goes to after, if set.
func attack(o options, tr vegeta.Targeter, after func(*vegeta.Result)) *vegeta.Metrics {
	atk := vegeta.NewAttacker(vegeta.Workers(o.workers), vegeta.MaxWorkers(o.workers), vegeta.KeepAlive(true))
	var m vegeta.Metrics
	for r := range atk.Attack(tr, vegeta.ConstantPacer{Freq: 0, Per: time.Second}, o.duration, "bench") {
		m.Add(r)
		if after != nil {
			after(r)
		}
	}
	m.Close()
	return &m
}

func report(name string, m *vegeta.Metrics) {
	fmt.Printf("%-24s %10.0f req/s   p50 %8.3f ms   p99 %8.3f ms   success %.2f%%   codes %v\n",
		name, m.Throughput, ms(m.Latencies.P50), ms(m.Latencies.P99), m.Success*100, m.StatusCodes)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// createKey creates an API key for the tenant and returns its secret.
func createKey(o options) (string, error) {
	body := `{"name":"bench","scopes":["templates:read"],"rate_limit_rpm":100000}`
	var out struct {
		SecretKey string `json:"secret_key"`
	}
	if err := post(o.base+"/v1/tenants/"+o.tenantID+"/api-keys", o.adminToken, []byte(body), http.StatusCreated, &out); err != nil {
		return "", fmt.Errorf("create api key: %w", err)
	}
	return out.SecretKey, nil
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
