package app_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/identity-svc/internal/app"
	"github.com/motionstudio/platform/services/identity-svc/internal/config"
)

var _ = Describe("rotating the encryption key", Ordered, func() {
	const password = "correct-horse-battery"
	var (
		base               config.Config
		keyA, keyB         string
		slug, tenantID     string
		email, totpSecret  string
		hookSecret         string
		verified           time.Time
		recv               *receiver
		outputs, adminLogs bytes.Buffer
	)
	withKeys := func(single, ring string) config.Config {
		c := base
		c.Auth.EncryptionKey, c.Auth.EncryptionKeys = single, ring
		return c
	}
	reseal := func(c config.Config, ctx context.Context, log *slog.Logger) (map[string]any, error) {
		GinkgoHelper()
		var out bytes.Buffer
		err := app.Admin(ctx, c, log, []string{"reseal", "-batch", "1"}, &out)
		outputs.Write(out.Bytes())
		var m map[string]any
		Expect(json.Unmarshal(out.Bytes(), &m)).To(Succeed(), out.String())
		return m, err
	}
	resealed := func(m map[string]any) map[string]float64 {
		out := map[string]float64{}
		for _, k := range m["kinds"].([]any) {
			kind := k.(map[string]any)
			out[kind["kind"].(string)] = kind["resealed"].(float64)
			Expect(kind["unreadable"]).To(BeEquivalentTo(0))
		}
		return out
	}
	login := func(api *testkit.API) *testkit.Response {
		GinkgoHelper()
		r := api.Do("POST", "/v1/auth/login", "", map[string]any{"tenant_slug": slug, "email": email, "password": password, "device_name": "Laptop"})
		return &r
	}

	BeforeAll(func() {
		// A database, a key space and a bus of its own: the suite's service seals under other keys.
		_, dsn := testkit.NewDatabase("identity_reseal")
		rdb, prefix := testkit.Redis("identity_reseal")
		bus := testkit.Bus("identity_reseal")
		base = cfg
		base.DB.DSN = dsn
		base.Redis.URL = fmt.Sprintf("redis://%s/%d", rdb.Options().Addr, rdb.Options().DB)
		base.Redis.KeyPrefix = prefix
		base.NATS.Prefix = bus.Subject("")
		a, b := make([]byte, 32), make([]byte, 32)
		_, _ = rand.Read(a)
		_, _ = rand.Read(b)
		keyA, keyB = base64.StdEncoding.EncodeToString(a), base64.StdEncoding.EncodeToString(b)
		recv = newReceiver()
	})

	It("seals a TOTP secret, a webhook secret and the signing key under ENCRYPTION_KEY", func() {
		c := withKeys(keyA, "")
		Expect(app.Migrate(context.Background(), c, slog.New(slog.DiscardHandler))).To(Succeed())
		api := startReplica(c)
		slug = "reseal-" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")
		email = "owner@" + slug + ".test"
		var out bytes.Buffer
		Expect(app.Admin(context.Background(), c, slog.New(slog.DiscardHandler), []string{"create-tenant", "-slug", slug, "-name", "Reseal", "-email", email}, &out)).To(Succeed())
		var t map[string]any
		Expect(json.Unmarshal(out.Bytes(), &t)).To(Succeed())
		tenantID = t["id"].(string)
		Expect(app.Admin(context.Background(), c, slog.New(slog.DiscardHandler),
			[]string{"create-user", "-tenant", slug, "-email", email, "-password", password, "-tenant-admin"}, &out)).To(Succeed())

		r := login(api)
		Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
		var tok map[string]any
		r.JSON(&tok)
		access := tok["access_token"].(string)

		r2 := api.Do("POST", "/v1/tenants/"+tenantID+"/webhooks", access, map[string]any{"name": "hook", "url": recv.srv.URL + "/hooks", "events": []string{"api_key.created"}})
		Expect(r2.Status).To(Equal(http.StatusCreated), string(r2.Body))
		var hook map[string]any
		r2.JSON(&hook)
		hookSecret = hook["secret"].(string)

		var setup map[string]any
		r3 := api.Do("POST", "/v1/auth/mfa/setup", access, map[string]any{"factor_type": "TOTP", "label": "Phone"})
		Expect(r3.Status).To(Equal(http.StatusOK), string(r3.Body))
		r3.JSON(&setup)
		totpSecret = setup["secret"].(string)
		verified = time.Now()
		r4 := api.Do("POST", "/v1/auth/mfa/verify", access, map[string]any{"factor_id": setup["factor_id"], "code": totpCode(totpSecret, verified)})
		Expect(r4.Status).To(Equal(http.StatusOK), string(r4.Body))
	})

	It("reseals under the new first key, resumes after an interruption, then changes nothing", func() {
		// The new key goes first in ENCRYPTION_KEYS; ENCRYPTION_KEY stays, as the key "default".
		c := withKeys(keyA, "b:"+keyB)
		startReplica(c)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		interrupted := slog.New(testkit.CancelOnLog(slog.NewJSONHandler(&adminLogs, nil), "reseal", cancel))
		first, err := reseal(c, ctx, interrupted)
		Expect(err).To(MatchError(context.Canceled))
		Expect(first["key_id"]).To(Equal("b"))
		Expect(resealed(first)).To(Equal(map[string]float64{"totp_secrets": 1}))

		log := slog.New(slog.NewJSONHandler(&adminLogs, nil))
		second, err := reseal(c, context.Background(), log)
		Expect(err).NotTo(HaveOccurred())
		Expect(resealed(second)).To(Equal(map[string]float64{"totp_secrets": 0, "webhook_secrets": 1, "signing_keys": 1}))

		third, err := reseal(c, context.Background(), log)
		Expect(err).NotTo(HaveOccurred())
		Expect(resealed(third)).To(Equal(map[string]float64{"totp_secrets": 0, "webhook_secrets": 0, "signing_keys": 0}))

		for _, secret := range []string{keyA, keyB, totpSecret, hookSecret, hookSecret[len("whsec_"):]} {
			Expect(outputs.String()).NotTo(ContainSubstring(secret))
			Expect(adminLogs.String()).NotTo(ContainSubstring(secret))
		}
	})

	It("works with the old key removed: a TOTP login, a signed webhook delivery, the signing key", func() {
		api := startReplica(withKeys("", "b:"+keyB))
		r := login(api)
		Expect(r.Status).To(Equal(http.StatusForbidden), string(r.Body))
		var pending map[string]any
		r.JSON(&pending)
		r2 := api.Do("POST", "/v1/auth/mfa/challenge", "", map[string]any{"mfa_token": pending["mfa_token"], "code": totpCode(totpSecret, verified.Add(30*time.Second))})
		Expect(r2.Status).To(Equal(http.StatusOK), string(r2.Body))
		var tok map[string]any
		r2.JSON(&tok)
		me := api.Do("GET", "/v1/users/me", tok["access_token"].(string), nil)
		Expect(me.Status).To(Equal(http.StatusOK), "a token signed with the resealed signing key")

		before := len(recv.requests())
		r3 := api.Do("POST", "/v1/tenants/"+tenantID+"/api-keys", tok["access_token"].(string), map[string]any{"name": "k", "scopes": []string{"renders:read"}})
		Expect(r3.Status).To(Equal(http.StatusCreated), string(r3.Body))
		Eventually(recv.requests).WithTimeout(15 * time.Second).Should(HaveLen(before + 1))
		got := recv.requests()[before]
		verifier, err := standardwebhooks.NewWebhook(hookSecret)
		Expect(err).NotTo(HaveOccurred())
		Expect(verifier.Verify(got.Body, got.Header)).To(Succeed())
	})

	It("refuses to start with neither the key of a sealed value nor a way to open it", func() {
		c := withKeys("", "c:"+base64.StdEncoding.EncodeToString(make([]byte, 32)))
		_, err := app.New(context.Background(), c, slog.New(slog.DiscardHandler))
		Expect(err).To(MatchError(ContainSubstring("signing key")))
	})
})
