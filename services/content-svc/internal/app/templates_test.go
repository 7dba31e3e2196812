package app_test

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
)

// catSetStats sets the counters that renders and ratings maintain.
func catSetStats(id string, useCount int, rateAvg float64) {
	GinkgoHelper()
	Expect(db.Exec(`UPDATE containers SET use_count = ?, rate_avg = ? WHERE id = ?`, useCount, rateAvg, id).Error).To(Succeed())
	// Written outside the service, the stats show in listings once the change is notified.
	Eventually(func() bool {
		for _, d := range catList(url.Values{"sort": {"popular"}, "page_size": {"100"}})["data"].([]any) {
			card := d.(map[string]any)
			if card["container_id"] == id {
				return card["use_count"] == float64(useCount) && card["rate_avg"] == rateAvg
			}
		}
		return false
	}).WithTimeout(notified).Should(BeTrue())
}

func catList(query url.Values) catJSON {
	GinkgoHelper()
	return catGet("/v1/templates?"+query.Encode(), catUser())
}

var _ = Describe("the template catalog", func() {
	BeforeEach(func() { testkit.Truncate(db) })

	Describe("filters", func() {
		var intro, promo, a, b, cc catJSON
		var ids []string

		BeforeEach(func() {
			intro = catCreate("/v1/categories", catJSON{"slug": "intro", "name": "Intro"})
			promo = catCreate("/v1/categories", catJSON{"slug": "promo", "name": "Promo"})
			t1 := catCreate("/v1/tags", catJSON{"slug": "t1", "name": "T1"})
			t2 := catCreate("/v1/tags", catJSON{"slug": "t2", "name": "T2"})
			ids = []string{catID(t1), catID(t2)}
			a = catPublished(catJSON{"name": "Wedding Slideshow", "keywords": "love marriage", "primary_mode": "video",
				"category_ids": []string{catID(intro)}, "tag_ids": ids})
			b = catPublished(catJSON{"name": "Corporate Opener", "description": "A wedding-free business intro", "primary_mode": "slideshow",
				"is_premium": true, "category_ids": []string{catID(promo)}, "tag_ids": ids[:1]})
			cc = catPublished(catJSON{"name": "Logo Reveal", "keywords": "brand", "primary_mode": "video", "is_premium": true})
			catProject(catID(a), 1920, 1080, nil)
			catProject(catID(a), 1080, 1920, nil)
			catProject(catID(b), 1080, 1080, nil)
			catProject(catID(cc), 1080, 1350, catJSON{"is_published": false})
			catContainer(catJSON{"name": "Wedding Draft", "category_ids": []string{catID(intro)}, "tag_ids": ids})
		})

		It("lists only published templates, with the aspects of their published projects", func() {
			body := catList(nil)
			Expect(catCardIDs(body)).To(ConsistOf(catID(a), catID(b), catID(cc)))
			Expect(body["meta"]).To(Equal(map[string]any{"page": 1.0, "page_size": 20.0, "total": 3.0, "has_more": false}))
			for _, d := range body["data"].([]any) {
				card := d.(map[string]any)
				switch card["container_id"] {
				case catID(a):
					Expect(card["available_aspects"]).To(Equal([]any{"16:9", "9:16"}))
				case catID(cc):
					Expect(card["available_aspects"]).To(BeEmpty())
				}
			}
		})

		It("searches name, keywords and description by word prefixes, best match first", func() {
			Expect(catCardIDs(catList(url.Values{"q": {"wedd"}}))).To(Equal([]string{catID(a), catID(b)}))
			Expect(catCardIDs(catList(url.Values{"q": {"marri"}}))).To(Equal([]string{catID(a)}))
			Expect(catCardIDs(catList(url.Values{"q": {"logo rev"}}))).To(Equal([]string{catID(cc)}))
			Expect(catCardIDs(catList(url.Values{"q": {"logo wedding"}}))).To(BeEmpty())
			Expect(catCardIDs(catList(url.Values{"q": {`'&|!:*()`}}))).To(HaveLen(3))
		})

		It("filters by category, every given tag, mode, aspect and premium", func() {
			Expect(catCardIDs(catList(url.Values{"category_id": {catID(intro)}}))).To(ConsistOf(catID(a)))
			Expect(catCardIDs(catList(url.Values{"tag_ids": ids[:1]}))).To(ConsistOf(catID(a), catID(b)))
			Expect(catCardIDs(catList(url.Values{"tag_ids": ids}))).To(ConsistOf(catID(a)))
			Expect(catCardIDs(catList(url.Values{"mode": {"video"}}))).To(ConsistOf(catID(a), catID(cc)))
			Expect(catCardIDs(catList(url.Values{"aspect": {"9:16"}}))).To(ConsistOf(catID(a)))
			Expect(catCardIDs(catList(url.Values{"aspect": {"4:5"}}))).To(BeEmpty())
			Expect(catCardIDs(catList(url.Values{"is_premium": {"true"}}))).To(ConsistOf(catID(b), catID(cc)))
			Expect(catCardIDs(catList(url.Values{"is_premium": {"false"}, "mode": {"video"}}))).To(ConsistOf(catID(a)))
			body := catList(url.Values{"is_premium": {"true"}, "category_id": {catID(promo)}, "q": {"corp"}})
			Expect(catCardIDs(body)).To(ConsistOf(catID(b)))
			Expect(body["meta"]).To(HaveKeyWithValue("total", 1.0))
		})

		It("refuses malformed filters", func() {
			for _, q := range []string{"aspect=3:2", "sort=best", "page=0", "page_size=101", "page_size=0",
				"category_id=nope", "tag_ids=nope", "is_premium=maybe"} {
				r := client.Do("GET", "/v1/templates?"+q, catUser(), nil)
				Expect(r.Status).To(Equal(http.StatusBadRequest), q)
			}
			Expect(client.Do("GET", "/v1/templates", "", nil).Status).To(Equal(http.StatusUnauthorized))
		})

		It("follows the paging rule: page 100,000 is the deepest, beyond it is invalid_paging", func() {
			Expect(client.Do("GET", "/v1/templates?page=100000", catUser(), nil).Status).To(Equal(http.StatusOK))
			r := client.Do("GET", "/v1/templates?page=100001", catUser(), nil)
			Expect(r.Status).To(Equal(http.StatusBadRequest))
			Expect(r.Body).To(ContainSubstring(`"code":"invalid_paging"`))
		})

		It("names a parameter that is not of its type, with the usual problem type", func() {
			r := client.Do("GET", "/v1/templates?page=two", catUser(), nil)
			Expect(r.Status).To(Equal(http.StatusBadRequest))
			var p map[string]any
			r.JSON(&p)
			Expect(p).To(HaveKeyWithValue("type", "https://motionstudio.dev/problems/invalid_parameter"))
			Expect(p).To(HaveKeyWithValue("detail", `Parameter "page" must be an integer.`))
		})
	})

	Describe("sorting and paging", func() {
		var all []catJSON

		BeforeEach(func() {
			all = nil
			for i := range 25 {
				c := catPublished(catJSON{"name": fmt.Sprintf("Item %02d", (i*7)%25)})
				catSetStats(catID(c), i%5, float64(i%3))
				all = append(all, c)
			}
		})

		pages := func(sort string, size int) []string {
			var got []string
			for page := 1; ; page++ {
				body := catList(url.Values{"sort": {sort}, "page": {fmt.Sprint(page)}, "page_size": {fmt.Sprint(size)}})
				meta := body["meta"].(map[string]any)
				Expect(meta["total"]).To(BeNumerically("==", 25))
				got = append(got, catCardIDs(body)...)
				if !meta["has_more"].(bool) {
					Expect(page).To(Equal((25 + size - 1) / size))
					return got
				}
			}
		}

		It("pages every sort with right totals, no duplicates and no gaps", func() {
			for _, sort := range []string{"newest", "popular", "rate", "az"} {
				for _, size := range []int{7, 10, 25} {
					got := pages(sort, size)
					Expect(got).To(HaveLen(25), sort)
					Expect(got).To(ConsistOf(mapIDs(all)), sort)
				}
			}
		})

		It("orders by each sort key with ties broken stably", func() {
			read := func(sort string) []catJSON {
				body := catList(url.Values{"sort": {sort}, "page_size": {"100"}})
				out := []catJSON{}
				for _, d := range body["data"].([]any) {
					out = append(out, d.(map[string]any))
				}
				return out
			}
			newest := read("newest")
			Expect(newest[0]["container_id"]).To(Equal(catID(all[24])))
			Expect(newest[24]["container_id"]).To(Equal(catID(all[0])))
			popular := read("popular")
			rate := read("rate")
			az := read("az")
			for i := 1; i < 25; i++ {
				Expect(popular[i-1]["use_count"].(float64)).To(BeNumerically(">=", popular[i]["use_count"].(float64)))
				if popular[i-1]["use_count"] == popular[i]["use_count"] {
					Expect(popular[i-1]["container_id"].(string) > popular[i]["container_id"].(string)).To(BeTrue())
				}
				Expect(rate[i-1]["rate_avg"].(float64)).To(BeNumerically(">=", rate[i]["rate_avg"].(float64)))
				Expect(az[i-1]["name"].(string) < az[i]["name"].(string)).To(BeTrue())
			}
			Expect(read("popular")).To(Equal(popular))
		})

		It("answers an empty page past the end with the total", func() {
			body := catList(url.Values{"page": {"9"}, "page_size": {"10"}})
			Expect(body["data"]).To(BeEmpty())
			Expect(body["meta"]).To(HaveKeyWithValue("total", 25.0))
			Expect(body["meta"]).To(HaveKeyWithValue("has_more", false))
		})
	})

	Describe("a template's detail, projects and relatives", func() {
		It("is found by slug or id with its projects, categories and tags", func() {
			cat := catCreate("/v1/categories", catJSON{"slug": "intro", "name": "Intro"})
			tag := catCreate("/v1/tags", catJSON{"slug": "clean", "name": "Clean"})
			c := catPublished(catJSON{"slug": "my-intro", "category_ids": []string{catID(cat)}, "tag_ids": []string{catID(tag)}})
			p := catProject(catID(c), 1920, 1080, nil)
			catProject(catID(c), 1080, 1080, catJSON{"is_published": false})
			for _, key := range []string{"my-intro", catID(c)} {
				d := catGet("/v1/templates/"+key, catUser())
				Expect(d["container"]).To(HaveKeyWithValue("id", catID(c)))
				Expect(d["projects"]).To(HaveLen(1))
				Expect(d["projects"].([]any)[0]).To(HaveKeyWithValue("id", catID(p)))
				Expect(d["categories"].([]any)[0]).To(HaveKeyWithValue("slug", "intro"))
				Expect(d["tags"].([]any)[0]).To(HaveKeyWithValue("slug", "clean"))
			}
			lookalike := catPublished(catJSON{"slug": catID(c)})
			Expect(catGet("/v1/templates/"+catID(c), catUser())["container"]).To(HaveKeyWithValue("id", catID(c)))
			Expect(catGet("/v1/templates/"+catID(lookalike), catUser())["container"]).To(HaveKeyWithValue("id", catID(lookalike)))
			list := catGet("/v1/templates/"+catID(c)+"/projects", tokens.ServiceToken("web"))
			Expect(list["data"]).To(HaveLen(1))
			Expect(client.Do("GET", "/v1/templates/nothing-here", catUser(), nil).Status).To(Equal(http.StatusNotFound))
			Expect(client.Do("GET", "/v1/templates/"+uuid.NewString()+"/projects", catUser(), nil).Status).To(Equal(http.StatusNotFound))
		})

		It("keeps unpublished templates out of detail, projects and related lists", func() {
			cat := catCreate("/v1/categories", catJSON{"slug": "intro", "name": "Intro"})
			ids := []string{catID(cat)}
			pub := catPublished(catJSON{"category_ids": ids})
			draft := catContainer(catJSON{"slug": "draft", "category_ids": ids})
			gone := catPublished(catJSON{"category_ids": ids})
			catNoContent("DELETE", "/v1/containers/"+catID(gone), nil)
			Expect(client.Do("GET", "/v1/templates/draft", catUser(), nil).Status).To(Equal(http.StatusNotFound))
			Expect(client.Do("GET", "/v1/templates/"+catID(draft), catAdmin(), nil).Status).To(Equal(http.StatusNotFound))
			Expect(client.Do("GET", "/v1/templates/"+catID(draft)+"/projects", catUser(), nil).Status).To(Equal(http.StatusNotFound))
			Expect(client.Do("GET", "/v1/templates/"+catID(draft)+"/related", catUser(), nil).Status).To(Equal(http.StatusNotFound))
			Expect(catCardIDs(catGet("/v1/templates/"+catID(pub)+"/related", catUser()))).To(BeEmpty())
		})

		It("ranks related templates by shared categories and tags", func() {
			c1 := catCreate("/v1/categories", catJSON{"slug": "c1", "name": "C1"})
			c2 := catCreate("/v1/categories", catJSON{"slug": "c2", "name": "C2"})
			t1 := catCreate("/v1/tags", catJSON{"slug": "t1", "name": "T1"})
			base := catPublished(catJSON{"category_ids": []string{catID(c1), catID(c2)}, "tag_ids": []string{catID(t1)}})
			three := catPublished(catJSON{"category_ids": []string{catID(c1), catID(c2)}, "tag_ids": []string{catID(t1)}})
			oneA := catPublished(catJSON{"category_ids": []string{catID(c1)}})
			oneB := catPublished(catJSON{"tag_ids": []string{catID(t1)}})
			two := catPublished(catJSON{"category_ids": []string{catID(c2)}, "tag_ids": []string{catID(t1)}})
			catPublished(nil)
			catSetStats(catID(oneB), 50, 0)

			path := "/v1/templates/" + catID(base) + "/related"
			Expect(catCardIDs(catGet(path, catUser()))).To(Equal([]string{catID(three), catID(two), catID(oneB), catID(oneA)}))
			Expect(catCardIDs(catGet(path+"?limit=2", catUser()))).To(Equal([]string{catID(three), catID(two)}))
			catNoContent("POST", "/v1/containers/"+catID(three)+"/unpublish", nil)
			Expect(catCardIDs(catGet(path, catUser()))).To(Equal([]string{catID(two), catID(oneB), catID(oneA)}))
			Expect(client.Do("GET", path+"?limit=0", catUser(), nil).Status).To(Equal(http.StatusBadRequest))
			Expect(client.Do("GET", path+"?limit=51", catUser(), nil).Status).To(Equal(http.StatusBadRequest))
		})
	})
})

func mapIDs(cs []catJSON) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = catID(c)
	}
	return out
}
