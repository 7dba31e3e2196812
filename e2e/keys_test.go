package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	"github.com/motionstudio/platform/pkg/testkit"
)

// withEnv is env with the given KEY=value entries replacing (or adding to) its own.
func withEnv(env []string, set ...string) []string {
	out := make([]string, 0, len(env)+len(set))
	for _, e := range env {
		if name, _, _ := strings.Cut(e, "="); !hasName(set, name) {
			out = append(out, e)
		}
	}
	return append(out, set...)
}

func hasName(env []string, name string) bool {
	for _, e := range env {
		if n, _, _ := strings.Cut(e, "="); n == name {
			return true
		}
	}
	return false
}

// kidOf is the key id in a token's header.
func kidOf(token string) string {
	GinkgoHelper()
	header, _, _ := strings.Cut(token, ".")
	raw, err := base64.RawURLEncoding.DecodeString(header)
	Expect(err).NotTo(HaveOccurred())
	var h struct {
		Kid string `json:"kid"`
	}
	Expect(json.Unmarshal(raw, &h)).To(Succeed())
	return h.Kid
}

// rotationPlatform is a second identity, content and agentteam, with their own databases, bus
// prefix and Redis prefix, whose keys the rotation spec rotates without touching the suite's.
type rotationPlatform struct {
	identity, content, agentteam string
	identityEnv                  []string
}

func startRotationPlatform() rotationPlatform {
	GinkgoHelper()
	ports := freePorts(3)
	base := func(i int) string { return fmt.Sprintf("http://127.0.0.1:%d", ports[i]) }
	_, identityDSN := testkit.NewDatabase("e2e_keys_identity")
	_, contentDSN := testkit.NewDatabase("e2e_keys_content")
	_, agentteamDSN := testkit.NewDatabase("e2e_keys_agentteam")
	_, redisPrefix := testkit.Redis("e2e_keys")
	common := []string{
		"JWT_ISSUER=" + base(0),
		"JWKS_URL=" + base(0) + "/.well-known/jwks.json",
		"NATS_SUBJECT_PREFIX=" + testkit.Bus("e2e_keys").Subject(""),
		"REDIS_KEY_PREFIX=" + redisPrefix,
		"LOG_LEVEL=warn",
		// The verifiers refresh the JWKS more often than a key is published ahead of its use.
		"JWKS_REFRESH_INTERVAL=1s",
		"SIGNING_KEY_PREPUBLISH=3s",
		"SIGNING_KEY_RELOAD=250ms",
	}
	r := rotationPlatform{identity: base(0), content: base(1), agentteam: base(2)}
	r.identityEnv = withEnv(p.IdentityEnv, append([]string{"HTTP_ADDR=127.0.0.1:" + fmt.Sprint(ports[0]), "DATABASE_URL=" + identityDSN}, common...)...)
	for i, svc := range []struct {
		bin string
		env []string
	}{
		{p.IdentityBin, r.identityEnv},
		{p.ContentBin, withEnv(p.ContentEnv, append([]string{"HTTP_ADDR=127.0.0.1:" + fmt.Sprint(ports[1]), "DATABASE_URL=" + contentDSN}, common...)...)},
		{p.AgentteamBin, withEnv(p.AgentteamEnv, append([]string{"HTTP_ADDR=127.0.0.1:" + fmt.Sprint(ports[2]), "DATABASE_URL=" + agentteamDSN}, common...)...)},
	} {
		cmd := exec.Command(svc.bin, "serve")
		cmd.Env = svc.env
		session, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			session.Terminate()
			Eventually(session).WithTimeout(30 * time.Second).Should(gexec.Exit())
		})
		Eventually(func() int { return status(base(i) + "/readyz") }).WithTimeout(60 * time.Second).
			WithPolling(100 * time.Millisecond).Should(Equal(http.StatusOK))
	}
	return r
}

// admin runs the operator CLI against the rotation platform's identity database.
func (r rotationPlatform) admin(args ...string) map[string]any {
	GinkgoHelper()
	cmd := exec.Command(p.IdentityBin, append([]string{"admin"}, args...)...)
	cmd.Env = r.identityEnv
	session, err := gexec.Start(cmd, nil, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	Eventually(session).WithTimeout(30*time.Second).Should(gexec.Exit(0), "identity-svc admin %v", args)
	var out map[string]any
	Expect(json.Unmarshal(session.Out.Contents(), &out)).To(Succeed())
	return out
}

// serviceToken is a service token from the rotation platform's identity.
func (r rotationPlatform) serviceToken() string {
	GinkgoHelper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {p.ClientID}, "client_secret": {p.ClientSecret}}
	resp, err := http.Post(r.identity+"/v1/oauth/token", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	Expect(resp.StatusCode).To(Equal(http.StatusOK))
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	Expect(json.NewDecoder(resp.Body).Decode(&tok)).To(Succeed())
	return tok.AccessToken
}

// traffic sends requests with every token it holds to the three services until stopped, and
// counts the answers that are not 200.
type traffic struct {
	mu       sync.Mutex
	user     []string
	service  []string
	sent     atomic.Int64
	refusals []string
}

func (t *traffic) add(user, service string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.user, t.service = append(t.user, user), append(t.service, service)
}

func (t *traffic) run(r rotationPlatform, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		t.mu.Lock()
		user, service := append([]string(nil), t.user...), append([]string(nil), t.service...)
		t.mu.Unlock()
		for k := range user {
			for _, u := range []struct{ url, token string }{
				{r.identity + "/v1/users/me", user[k]},
				{r.content + "/v1/tags", user[k]},
				{r.agentteam + "/api/orgboard/cartable", user[k]},
				{r.content + "/v1/project-servers", service[k]},
			} {
				req, _ := http.NewRequest(http.MethodGet, u.url, nil)
				req.Header.Set("Authorization", "Bearer "+u.token)
				resp, err := http.DefaultClient.Do(req)
				t.sent.Add(1)
				code := 0
				if err == nil {
					code = resp.StatusCode
					_ = resp.Body.Close()
				}
				if code != http.StatusOK {
					t.mu.Lock()
					t.refusals = append(t.refusals, fmt.Sprintf("%s with the tokens of key #%d: %d %v", u.url, k, code, err))
					t.mu.Unlock()
				}
			}
		}
	}
}

var _ = Describe("rotating identity's signing key under traffic", func() {
	It("refuses no request at any of the three services while the key rotates twice", func() {
		r := startRotationPlatform()
		r.admin("create-tenant", "-slug", "rotation", "-name", "Rotation", "-email", "ops@rotation.test")
		r.admin("create-user", "-tenant", "rotation", "-email", "rita@rotation.test", "-password", "correct horse rotation")
		userToken := func() string {
			return r.admin("token", "-tenant", "rotation", "-email", "rita@rotation.test", "-ttl", "10m")["access_token"].(string)
		}

		t := &traffic{}
		t.add(userToken(), r.serviceToken())
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(done)
			t.run(r, stop)
		}()

		kids := []string{kidOf(t.user[0])}
		for range 2 {
			next := r.admin("keys", "rotate")["kid"].(string)
			Expect(kids).NotTo(ContainElement(next))
			Eventually(func() string { return kidOf(r.serviceToken()) }).WithTimeout(15 * time.Second).
				WithPolling(250 * time.Millisecond).Should(Equal(next))
			user := userToken()
			Expect(kidOf(user)).To(Equal(next))
			t.add(user, r.serviceToken())
			kids = append(kids, next)
		}
		sent := t.sent.Load()
		Eventually(t.sent.Load).Should(BeNumerically(">", sent+40), "the tokens of the newest key flow too")
		close(stop)
		<-done

		Expect(t.refusals).To(BeEmpty())
		Expect(t.sent.Load()).To(BeNumerically(">", 100))
		var listed []string
		for _, k := range r.admin("keys", "list")["keys"].([]any) {
			listed = append(listed, k.(map[string]any)["kid"].(string))
		}
		Expect(listed).To(ConsistOf(kids))
	})
})
