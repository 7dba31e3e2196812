package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/content-svc/internal/cache"
)

var _ = Describe("catalog listings kept in memory by two replicas of the service", func() {
	var replicas []*testkit.API
	BeforeEach(func() {
		testkit.Truncate(db)
		other, _ := serve(suiteCfg)
		replicas = []*testkit.API{client, other}
		for _, api := range replicas {
			Eventually(func() bool { return catalogListening(api) }).Should(BeTrue())
		}
	})

	// listing answers the replica's page of the "replicated" mode, sorted by sort, as
	// "<total>:<id>,<id>,...".
	listing := func(api *testkit.API, sort string) func() string {
		return func() string {
			q := url.Values{"mode": {"replicated"}, "sort": {sort}, "page_size": {"2"}}
			r := api.Do("GET", "/v1/templates?"+q.Encode(), catUser(), nil)
			Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
			var body catJSON
			Expect(json.Unmarshal(r.Body, &body)).To(Succeed())
			return fmt.Sprintf("%v:%s", body["meta"].(map[string]any)["total"], strings.Join(catCardIDs(body), ","))
		}
	}
	// both reads the listing on both replicas and answers what they agree on once the second
	// applied the first one's writes (notified).
	both := func(sort string) string {
		GinkgoHelper()
		a := listing(replicas[0], sort)()
		Eventually(listing(replicas[1], sort)).WithTimeout(notified).Should(Equal(a))
		return a
	}
	// eventually expects every replica to answer want once the change is notified.
	eventually := func(sort, want string) {
		GinkgoHelper()
		for _, api := range replicas {
			Eventually(listing(api, sort)).WithTimeout(notified).Should(Equal(want))
		}
	}

	It("shows a write of one replica in the other's pages and totals once notified", func() {
		a := catPublished(catJSON{"name": "B", "primary_mode": "replicated"})
		b := catPublished(catJSON{"name": "A", "primary_mode": "replicated"})
		Expect(both("az")).To(Equal(fmt.Sprintf("2:%s,%s", catID(b), catID(a))))

		// A rename moves the cards, through the first replica.
		catNoContentOn(replicas[0], "PATCH", "/v1/containers/"+catID(a), catJSON{"name": "0"}, http.StatusOK)
		Expect(listing(replicas[0], "az")()).To(Equal(fmt.Sprintf("2:%s,%s", catID(a), catID(b))), "the writer reads its own write at once")
		eventually("az", fmt.Sprintf("2:%s,%s", catID(a), catID(b)))

		// A third template makes a second page, so the total is counted (and kept); an
		// unpublication through the second replica drops it on the first.
		c := catPublished(catJSON{"name": "C", "primary_mode": "replicated"})
		Expect(both("az")).To(Equal(fmt.Sprintf("3:%s,%s", catID(a), catID(b))))
		catNoContentOn(replicas[1], "POST", "/v1/containers/"+catID(a)+"/unpublish", catJSON{"reason": "gone"}, http.StatusNoContent)
		eventually("az", fmt.Sprintf("2:%s,%s", catID(b), catID(c)))
	})

	It("shows a change of what a card shows or sorts by, written by anyone, once notified", func() {
		a := catPublished(catJSON{"name": "A", "primary_mode": "replicated"})
		b := catPublished(catJSON{"name": "B", "primary_mode": "replicated"})
		catPublished(catJSON{"name": "C", "primary_mode": "replicated"})
		Expect(both("popular")).NotTo(HavePrefix("3:" + catID(b)))
		Expect(db.Exec(`UPDATE containers SET use_count = 7 WHERE id = ?`, catID(b)).Error).To(Succeed())
		Eventually(listing(replicas[1], "popular")).WithTimeout(notified).Should(HavePrefix("3:" + catID(b)))
		Expect(db.Exec(`UPDATE containers SET use_count = 9 WHERE id = ?`, catID(a)).Error).To(Succeed())
		eventually("popular", fmt.Sprintf("3:%s,%s", catID(a), catID(b)))
	})

	It("serves nothing stale after the listeners lose their connections, and keeps listings again once they listen", func() {
		a := catPublished(catJSON{"name": "A", "primary_mode": "replicated"})
		b := catPublished(catJSON{"name": "B", "primary_mode": "replicated"})
		c := catPublished(catJSON{"name": "C", "primary_mode": "replicated"})
		both("az")
		Expect(db.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = current_database() AND application_name = ?`, cache.ApplicationName).Error).To(Succeed())
		Expect(db.Exec(`UPDATE containers SET is_published = false WHERE id = ?`, catID(a)).Error).To(Succeed())
		for _, api := range replicas {
			Eventually(listing(api, "az")).WithTimeout(notified).Should(Equal(fmt.Sprintf("2:%s,%s", catID(b), catID(c))))
			Eventually(func() bool { return catalogListening(api) }).WithTimeout(10 * time.Second).Should(BeTrue())
		}
		both("az")
		Expect(db.Exec(`UPDATE containers SET is_published = true WHERE id = ?`, catID(a)).Error).To(Succeed())
		eventually("az", fmt.Sprintf("3:%s,%s", catID(a), catID(b)))
	})
})

// catNoContentOn sends an administrator's request to one replica and expects status.
func catNoContentOn(api *testkit.API, method, path string, body any, status int) {
	GinkgoHelper()
	r := api.Do(method, path, catAdmin(), body)
	Expect(r.Status).To(Equal(status), string(r.Body))
}

// catalogListening reports whether the replica's catalog cache listener listens (its gauge
// reads 1).
func catalogListening(api *testkit.API) bool {
	r := api.Do("GET", "/metrics", "", nil)
	return strings.Contains(string(r.Body), "\ncontent_catalog_cache_listening 1\n")
}
