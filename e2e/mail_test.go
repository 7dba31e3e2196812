package e2e

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// caughtMail is a message as the SMTP catcher's API (MailHog, /api/v2) answers it.
type caughtMail struct {
	ID      string `json:"ID"`
	Content struct {
		Headers map[string][]string `json:"Headers"`
		Body    string              `json:"Body"`
	} `json:"Content"`
	Raw struct {
		To []string `json:"To"`
	} `json:"Raw"`
}

// mailTo answers the messages the catcher holds for the recipient address to.
func mailTo(to string) []caughtMail {
	code, _, body := call(http.MethodGet, p.MailURL+"/api/v2/search?"+url.Values{"kind": {"to"}, "query": {to}}.Encode(), "", nil)
	Expect(code).To(Equal(http.StatusOK), "the catcher's search: %s", body)
	var found struct {
		Items []caughtMail `json:"items"`
	}
	Expect(json.Unmarshal(body, &found)).To(Succeed())
	return found.Items
}

// verifyLink finds the token and the code of an email verification message's link.
var verifyLink = regexp.MustCompile(`/verify/email\?(\S+)`)

var _ = Describe("email verification through the SMTP catcher", func() {
	It("verifies a new account with the token and code of the email the catcher received", func() {
		slug := "mail-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:10]
		admin("create-tenant", "-slug", slug, "-name", "Mail "+slug, "-email", "ops@"+slug+".test")
		email := "grace-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:12] + "@" + slug + ".test"

		code, _, body := call(http.MethodPost, p.IdentityURL+"/v1/auth/register", "", strings.NewReader(
			`{"tenant_slug":"`+slug+`","email":"`+email+`","password":"correct-horse-battery","full_name":"Grace"}`),
			"Content-Type", "application/json")
		Expect(code).To(Equal(http.StatusCreated), "register: %s", body)
		var registered struct {
			UserID               string `json:"user_id"`
			VerificationRequired bool   `json:"verification_required"`
		}
		Expect(json.Unmarshal(body, &registered)).To(Succeed())
		Expect(registered.VerificationRequired).To(BeTrue())

		var mails []caughtMail
		Eventually(func() []caughtMail {
			mails = mailTo(email)
			return mails
		}).WithTimeout(10*time.Second).WithPolling(100*time.Millisecond).Should(HaveLen(1), "one message to %s", email)
		m := mails[0]
		DeferCleanup(func() {
			status, _, answer := call(http.MethodDelete, p.MailURL+"/api/v1/messages/"+m.ID, "", nil)
			Expect(status).To(Equal(http.StatusOK), "delete the caught message: %s", answer)
		})
		Expect(m.Raw.To).To(ConsistOf(email))
		Expect(m.Content.Headers["Subject"]).To(ConsistOf("Verify your email address"))
		Expect(m.Content.Headers["From"]).To(ConsistOf("no-reply@motionstudio.local"))

		link := verifyLink.FindStringSubmatch(m.Content.Body)
		Expect(link).To(HaveLen(2), "a verification link in %q", m.Content.Body)
		query, err := url.ParseQuery(link[1])
		Expect(err).NotTo(HaveOccurred())
		Expect(query.Get("code")).To(MatchRegexp(`^\d{6}$`))
		Expect(m.Content.Body).To(ContainSubstring("Your verification code is " + query.Get("code") + "."))
		Expect(query.Get("token")).NotTo(BeEmpty())

		verify, err := json.Marshal(map[string]string{"token": query.Get("token"), "code": query.Get("code")})
		Expect(err).NotTo(HaveOccurred())
		code, _, body = call(http.MethodPost, p.IdentityURL+"/v1/auth/verify/email", "", strings.NewReader(string(verify)),
			"Content-Type", "application/json")
		Expect(code).To(Equal(http.StatusOK), "verify: %s", body)
		var verified struct {
			UserID        string `json:"user_id"`
			EmailVerified bool   `json:"email_verified"`
		}
		Expect(json.Unmarshal(body, &verified)).To(Succeed())
		Expect(verified.EmailVerified).To(BeTrue())
		Expect(verified.UserID).To(Equal(registered.UserID))
	})
})
