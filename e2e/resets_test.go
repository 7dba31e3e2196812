package e2e

import (
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
)

var _ = Describe("a password reset accepted by an identity process killed before answering it", func() {
	It("is still answered: the reset email reaches the catcher", func() {
		slug := "reset-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:10]
		admin("create-tenant", "-slug", slug, "-name", "Reset "+slug, "-email", "ops@"+slug+".test")
		email := "ada-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:12] + "@" + slug + ".test"
		code, _, body := call(http.MethodPost, p.IdentityURL+"/v1/auth/register", "", strings.NewReader(
			`{"tenant_slug":"`+slug+`","email":"`+email+`","password":"correct-horse-battery","full_name":"Ada"}`),
			"Content-Type", "application/json")
		Expect(code).To(Equal(http.StatusCreated), "register: %s", body)

		// A second identity process on the same database that accepts resets but never answers them.
		base := fmt.Sprintf("http://127.0.0.1:%d", freePorts(1)[0])
		cmd := exec.Command(p.IdentityBin, "serve")
		cmd.Env = withEnv(p.IdentityEnv, "HTTP_ADDR="+strings.TrimPrefix(base, "http://"), "PASSWORD_RESET_WORKER=false")
		session, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			session.Kill()
			Eventually(session).WithTimeout(30 * time.Second).Should(gexec.Exit())
		})
		Eventually(func() int { return status(base + "/readyz") }).WithTimeout(60 * time.Second).Should(Equal(http.StatusOK))

		code, _, body = call(http.MethodPost, base+"/v1/auth/password/reset/request", "", strings.NewReader(
			`{"tenant_slug":"`+slug+`","email":"`+email+`"}`), "Content-Type", "application/json")
		Expect(code).To(Equal(http.StatusAccepted), "reset request: %s", body)
		session.Kill()
		Eventually(session).WithTimeout(30 * time.Second).Should(gexec.Exit())

		Eventually(func() []string {
			var subjects []string
			for _, m := range mailTo(email) {
				subjects = append(subjects, m.Content.Headers["Subject"]...)
			}
			return subjects
		}).WithTimeout(30*time.Second).WithPolling(200*time.Millisecond).Should(ContainElement("Reset your password"),
			"the suite's identity process answers the request the killed one accepted")
		for _, m := range mailTo(email) {
			status, _, answer := call(http.MethodDelete, p.MailURL+"/api/v1/messages/"+m.ID, "", nil)
			Expect(status).To(Equal(http.StatusOK), "delete the caught message: %s", answer)
		}
	})
})
