package app_test

import (
	"fmt"
	"net/url"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
)

// notified bounds how long a change written elsewhere (another replica, an operator's SQL)
// takes to reach this process's catalog cache.
const notified = 2 * time.Second

var _ = Describe("the catalog's totals", func() {
	var tpl []catJSON

	BeforeEach(func() {
		testkit.Truncate(db)
		t1 := catCreate("/v1/tags", catJSON{"slug": "t1", "name": "T1"})
		t2 := catCreate("/v1/tags", catJSON{"slug": "t2", "name": "T2"})
		tpl = nil
		for i := range 5 {
			tpl = append(tpl, catPublished(catJSON{"name": fmt.Sprintf("Counted %d", i), "primary_mode": "counted",
				"tag_ids": []string{catID(t1), catID(t2)}}))
		}
	})

	meta := func(query url.Values) map[string]any {
		GinkgoHelper()
		query.Set("mode", "counted")
		query.Set("page_size", "2")
		return catList(query)["meta"].(map[string]any)
	}

	It("show this process's writes in the next listing at once", func() {
		Expect(meta(url.Values{})).To(HaveKeyWithValue("total", 5.0))
		catNoContent("DELETE", "/v1/containers/"+catID(tpl[0]), nil)
		Expect(meta(url.Values{})).To(HaveKeyWithValue("total", 4.0))
		catNoContent("POST", "/v1/containers/"+catID(tpl[1])+"/unpublish", catJSON{"reason": "outdated"})
		Expect(meta(url.Values{"sort": {"az"}})).To(HaveKeyWithValue("total", 3.0))
		catPublished(catJSON{"name": "Counted late", "primary_mode": "counted"})
		Expect(meta(url.Values{"page": {"2"}})).To(HaveKeyWithValue("total", 4.0))
	})

	It("reuse a total for the same filters in any sort or page, and drop it once any replica's write is notified", func() {
		tags := tpl[0]["tag_ids"].([]any)
		filter := url.Values{"tag_ids": {tags[0].(string), tags[1].(string)}}
		Expect(meta(filter)).To(HaveKeyWithValue("total", 5.0))

		// Another replica's writes (here straight into the database) show once notified.
		Expect(db.Exec(`UPDATE containers SET is_published = false WHERE id = ?`, catID(tpl[4])).Error).To(Succeed())
		reordered := url.Values{"tag_ids": {tags[1].(string), tags[0].(string)}, "sort": {"popular"}}
		Eventually(func() map[string]any { return meta(reordered) }).WithTimeout(notified).
			Should(Equal(map[string]any{"page": 1.0, "page_size": 2.0, "total": 4.0, "has_more": true}))
		Expect(db.Exec(`DELETE FROM container_tags WHERE container_id = ? AND tag_id = ?`, catID(tpl[3]), tags[0]).Error).To(Succeed())
		Eventually(func() map[string]any { return meta(reordered) }).WithTimeout(notified).Should(HaveKeyWithValue("total", 3.0))

		// has_more never trusts a kept total: page 2 of the 3 left is the last one.
		reordered.Set("page", "2")
		Expect(meta(reordered)).To(HaveKeyWithValue("has_more", false))

		catNoContent("DELETE", "/v1/containers/"+catID(tpl[0]), nil)
		reordered.Set("page", "1")
		Expect(meta(reordered)).To(Equal(map[string]any{"page": 1.0, "page_size": 2.0, "total": 2.0, "has_more": false}))
	})

	It("count a template in an aspect once a project of that aspect is published, on any replica", func() {
		project := func(i int) {
			GinkgoHelper()
			Expect(db.Exec(`INSERT INTO projects (id, container_id, name, aspect, original_width, original_height, project_duration_sec, choose_mode)
				VALUES (gen_random_uuid(), ?, 'P', '4:5', 1080, 1350, 10, 'scene')`, catID(tpl[i])).Error).To(Succeed())
		}
		aspect := url.Values{"aspect": {"4:5"}}
		for i := range 3 {
			project(i)
		}
		total := func() any { return meta(aspect)["total"] }
		Eventually(total).WithTimeout(notified).Should(Equal(3.0))
		project(3)
		Eventually(total).WithTimeout(notified).Should(Equal(4.0))
		Expect(db.Exec(`UPDATE projects SET is_published = false WHERE container_id = ?`, catID(tpl[0])).Error).To(Succeed())
		Eventually(total).WithTimeout(notified).Should(Equal(3.0))
		cards := catList(url.Values{"aspect": {"4:5"}, "mode": {"counted"}})["data"].([]any)
		Expect(cards).To(HaveLen(3))
		for _, c := range cards {
			Expect(c).To(HaveKeyWithValue("available_aspects", []any{"4:5"}))
		}
	})
})
