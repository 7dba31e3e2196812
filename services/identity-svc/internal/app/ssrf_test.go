package app_test

import (
	"net/http"
	"net/netip"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
)

// The SSRF sweep for webhook destinations. The suite allows loopback (its receivers listen on
// 127.0.0.1), as local development does; everything else the platform never calls is refused
// when a webhook is registered and again when a delivery connects, after DNS, on every
// connection, redirects included.
var _ = Describe("SSRF attempts through tenant webhooks", func() {
	var (
		tenantID string
		admin    member
	)

	BeforeEach(func() {
		var slug string
		tenantID, slug = newTenant("ssrf")
		admin = newMember(slug, "tenant-admin")
	})

	// onName rewrites a receiver's 127.0.0.1 URL to reach its port through name.
	onName := func(raw, name string) string { return strings.Replace(raw, "127.0.0.1", name, 1) }

	DescribeTable("refuses the destination when the webhook is registered, with a 400 naming the url",
		func(url, message string) {
			r := client.Do("POST", "/v1/tenants/"+tenantID+"/webhooks", admin.Token,
				map[string]any{"name": "hook", "url": url, "events": []string{"api_key.created"}})
			Expect(r.Status).To(Equal(http.StatusBadRequest), string(r.Body))
			var problem struct {
				Errors []struct{ Field, Message string }
			}
			r.JSON(&problem)
			Expect(problem.Errors).To(ContainElement(And(
				HaveField("Field", "url"), HaveField("Message", "url "+message))))
		},
		testkit.SSRFRefusedURLs(),
	)

	DescribeTable("refuses at delivery a name that passed registration but resolves to a refused address, without retrying",
		func(addr string) {
			recv := newReceiver()
			name := testkit.SSRFName("hook", addr)
			id, _ := subscribe(admin, tenantID, onName(recv.srv.URL, name), "api_key.created")
			dnsServer.SetAddrs(name, netip.MustParseAddr(addr))

			createKey(admin, tenantID)
			Eventually(func() []map[string]any { return deliveryAttempts(admin, tenantID, id) }).WithTimeout(10 * time.Second).Should(HaveLen(1))
			Consistently(func() []map[string]any { return deliveryAttempts(admin, tenantID, id) }).WithTimeout(time.Second).Should(HaveLen(1))
			a := deliveryAttempts(admin, tenantID, id)[0]
			Expect(a).To(HaveKeyWithValue("succeeded", false))
			Expect(a).To(HaveKeyWithValue("error_message", "The server's address is not allowed."))
			Expect(a["error_message"]).NotTo(ContainSubstring(addr))
			Expect(recv.requests()).To(BeEmpty())
		},
		testkit.SSRFResolvedAddrs(),
	)

	It("delivers to a name resolving to the allowed loopback, so the refusals above come from the addresses", func() {
		recv := newReceiver()
		dnsServer.SetAddrs("allowed.example.test", netip.MustParseAddr("127.0.0.1"))
		subscribe(admin, tenantID, onName(recv.srv.URL, "allowed.example.test"), "api_key.created")
		createKey(admin, tenantID)
		Eventually(recv.requests).WithTimeout(10 * time.Second).Should(HaveLen(1))
	})

	DescribeTable("records a redirect as the failed answer and never follows it",
		func(location string) {
			redirector := testkit.NewRedirector(dnsServer, location)
			id, _ := subscribe(admin, tenantID, redirector.URL+"/hook", "api_key.created")
			createKey(admin, tenantID)

			Eventually(func() []map[string]any { return deliveryAttempts(admin, tenantID, id) }).WithTimeout(10 * time.Second).ShouldNot(BeEmpty())
			a := deliveryAttempts(admin, tenantID, id)[0]
			Expect(a).To(HaveKeyWithValue("succeeded", false))
			Expect(a).To(HaveKeyWithValue("response_status", BeNumerically("==", http.StatusFound)))
			Expect(redirector.Followed.Load()).To(BeZero())
		},
		testkit.SSRFRedirectTargets(),
	)
})
