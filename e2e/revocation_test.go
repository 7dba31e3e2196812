package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("a session revoked at identity-svc", func() {
	It("is refused by content-svc and agentteam-svc within a second of logging out", func() {
		slug := "revoke-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:10]
		admin("create-tenant", "-slug", slug, "-name", "Revoke "+slug, "-email", "ops@"+slug+".test")
		admin("create-user", "-tenant", slug, "-email", "eve@"+slug+".test", "-password", "correct horse battery", "-name", "Eve")
		login, err := json.Marshal(map[string]string{"tenant_slug": slug, "email": "eve@" + slug + ".test", "password": "correct horse battery"})
		Expect(err).NotTo(HaveOccurred())
		code, _, body := call(http.MethodPost, p.IdentityURL+"/v1/auth/login", "", strings.NewReader(string(login)), "Content-Type", "application/json")
		Expect(code).To(Equal(http.StatusOK), string(body))
		var tokens struct {
			AccessToken string `json:"access_token"`
		}
		Expect(json.Unmarshal(body, &tokens)).To(Succeed())
		token := tokens.AccessToken

		statusAt := func(url string) func() int {
			return func() int {
				code, _, _ := call(http.MethodGet, url, token, nil)
				return code
			}
		}
		Expect(statusAt(p.ContentURL + "/v1/tags")()).To(Equal(http.StatusOK))
		Expect(statusAt(p.AgentteamURL + "/api/orgboard/cartable")()).To(Equal(http.StatusOK))

		code, _, body = call(http.MethodPost, p.IdentityURL+"/v1/auth/logout", token, nil)
		Expect(code).To(Equal(http.StatusNoContent), string(body))
		Eventually(statusAt(p.ContentURL + "/v1/tags")).WithTimeout(time.Second).WithPolling(20 * time.Millisecond).
			Should(Equal(http.StatusUnauthorized))
		Eventually(statusAt(p.AgentteamURL + "/api/orgboard/cartable")).WithTimeout(time.Second).WithPolling(20 * time.Millisecond).
			Should(Equal(http.StatusUnauthorized))
	})
})
