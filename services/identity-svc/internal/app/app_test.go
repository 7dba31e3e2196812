package app_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/services/identity-svc/internal/app"
)

func form(v url.Values) (string, []string) {
	return v.Encode(), []string{"Content-Type", "application/x-www-form-urlencoded"}
}

var _ = Describe("the JWKS", func() {
	It("publishes one Ed25519 public key with a stable key id", func() {
		r := client.Do("GET", "/.well-known/jwks.json", "", nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		var set struct {
			Keys []map[string]any `json:"keys"`
		}
		r.JSON(&set)
		Expect(set.Keys).To(HaveLen(1))
		Expect(set.Keys[0]).To(HaveKeyWithValue("crv", "Ed25519"))
		Expect(set.Keys[0]).NotTo(HaveKey("d"))
		Expect(client.Do("GET", "/.well-known/jwks.json", "", nil).Body).To(Equal(r.Body))
	})
})

var _ = Describe("the client-credentials grant", Ordered, func() {
	It("answers a service token for a configured client (HTTP Basic or form fields)", func() {
		body, hdr := form(url.Values{"grant_type": {"client_credentials"}, "client_id": {clientID}, "client_secret": {clientSecret}})
		r := client.Do("POST", "/v1/oauth/token", "", body, hdr...)
		Expect(r.Status).To(Equal(http.StatusOK))
		Expect(r.Header.Get("Cache-Control")).To(Equal("no-store"))
		var tok map[string]any
		r.JSON(&tok)
		Expect(tok).To(HaveKeyWithValue("token_type", "Bearer"))
		Expect(tok).To(HaveKeyWithValue("expires_in", BeNumerically("==", cfg.ServiceTokenTTL.Seconds())))

		me := client.Do("GET", "/v1/users/me", tok["access_token"].(string), nil)
		Expect(me.Status).To(Equal(http.StatusForbidden), "a service token is not a user")
	})

	It("refuses an unknown client and a wrong secret alike", func() {
		for _, creds := range [][2]string{{clientID, "not-the-secret-at-all"}, {"nobody", clientSecret}, {"", ""}} {
			body, hdr := form(url.Values{"grant_type": {"client_credentials"}, "client_id": {creds[0]}, "client_secret": {creds[1]}})
			r := client.Do("POST", "/v1/oauth/token", "", body, hdr...)
			Expect(r.Status).To(Equal(http.StatusUnauthorized))
			Expect(string(r.Body)).To(ContainSubstring(`"error":"invalid_client"`))
		}
	})

	It("refuses other grants", func() {
		body, hdr := form(url.Values{"grant_type": {"password"}})
		r := client.Do("POST", "/v1/oauth/token", "", body, hdr...)
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(ContainSubstring(`"error":"unsupported_grant_type"`))
	})

	It("slows down a caller that keeps asking, with Retry-After", func() {
		body, hdr := form(url.Values{"grant_type": {"client_credentials"}})
		var last int
		for range tokenLimit + 1 {
			r := client.Do("POST", "/v1/oauth/token", "", body, hdr...)
			last = r.Status
			if last == http.StatusTooManyRequests {
				Expect(r.Header.Get("Retry-After")).NotTo(BeEmpty())
				Expect(string(r.Body)).To(ContainSubstring(`"error":"slow_down"`))
				break
			}
		}
		Expect(last).To(Equal(http.StatusTooManyRequests))
	})
})

var _ = Describe("the operator CLI and GET /v1/users/me", Ordered, func() {
	var token, userID string

	BeforeAll(func() {
		admin("create-tenant", "-slug", "globex", "-name", "Globex", "-email", "it@globex.test")
		userID = admin("create-user", "-tenant", "globex", "-email", "hank@globex.test", "-password", "s3cret-pass", "-platform-admin")["id"].(string)
		token = admin("token", "-tenant", "globex", "-email", "hank@globex.test", "-ttl", "10m")["access_token"].(string)
	})

	It("answers the user the token names", func() {
		r := client.Do("GET", "/v1/users/me", token, nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		var me map[string]any
		r.JSON(&me)
		Expect(me).To(HaveKeyWithValue("id", userID))
		Expect(me).To(HaveKeyWithValue("is_admin", true))
		Expect(me).To(HaveKeyWithValue("email", "hank@globex.test"))
	})

	It("mints a token that lives as long as an access token unless -ttl says otherwise", func() {
		minted := admin("token", "-tenant", "globex", "-email", "hank@globex.test")
		Expect(minted).To(HaveKeyWithValue("expires_in", BeNumerically("==", cfg.AccessTokenTTL.Seconds())))
		Expect(client.Do("GET", "/v1/users/me", minted["access_token"].(string), nil).Status).To(Equal(http.StatusOK))
	})

	It("answers 401 problem+json without a token", func() {
		r := client.Do("GET", "/v1/users/me", "", nil)
		Expect(r.Status).To(Equal(http.StatusUnauthorized))
		Expect(r.Header.Get("Content-Type")).To(HavePrefix("application/problem+json"))
	})

	It("refuses a duplicate tenant slug and a duplicate email as conflicts", func() {
		ctx := context.Background()
		log := slog.New(slog.DiscardHandler)
		var sink strings.Builder
		err := app.Admin(ctx, cfg, log, []string{"create-tenant", "-slug", "globex", "-name", "G2", "-email", "x@globex.test"}, &sink)
		Expect(apperr.KindOf(err)).To(Equal(apperr.Conflict))
		err = app.Admin(ctx, cfg, log, []string{"create-user", "-tenant", "globex", "-email", "HANK@globex.test", "-password", "another-pass"}, &sink)
		Expect(apperr.KindOf(err)).To(Equal(apperr.Conflict))
	})

	It("refuses a short password and an unknown tenant", func() {
		ctx := context.Background()
		log := slog.New(slog.DiscardHandler)
		var sink strings.Builder
		err := app.Admin(ctx, cfg, log, []string{"create-user", "-tenant", "globex", "-email", "a@globex.test", "-password", "short"}, &sink)
		Expect(apperr.KindOf(err)).To(Equal(apperr.Invalid))
		err = app.Admin(ctx, cfg, log, []string{"create-user", "-tenant", "nope", "-email", "a@nope.test", "-password", "long-enough"}, &sink)
		Expect(apperr.KindOf(err)).To(Equal(apperr.NotFound))
	})
})
