package app_test

import (
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
)

// seedContainer inserts a published container and returns its id.
func seedContainer(slug string) string {
	GinkgoHelper()
	id := uuid.Must(uuid.NewV7()).String()
	Expect(db.Exec(`INSERT INTO containers (id, slug, name, primary_mode, is_published) VALUES (?, ?, ?, 'video', true)`,
		id, slug, slug).Error).To(Succeed())
	return id
}

var _ = Describe("blogs", func() {
	BeforeEach(func() { testkit.Truncate(db) })

	create := func(slug, title, body string, published bool) {
		GinkgoHelper()
		r := client.Do("POST", "/v1/blogs", adminToken(), map[string]any{
			"slug": slug, "title": title, "body": body, "excerpt": "about " + title, "is_published": published,
		})
		Expect(r.Status).To(Equal(http.StatusCreated), string(r.Body))
	}
	slugs := func(query string) ([]string, map[string]any) {
		GinkgoHelper()
		r := client.Do("GET", "/v1/blogs"+query, userToken(), nil)
		Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
		var body struct {
			Data []map[string]any
			Meta map[string]any
		}
		r.JSON(&body)
		var out []string
		for _, b := range body.Data {
			out = append(out, b["slug"].(string))
		}
		return out, body.Meta
	}

	BeforeEach(func() {
		create("first-post", "Making wedding intros", "Wedding templates with gold titles", true)
		create("second-post", "Logo reveals", "Corporate logo animations", true)
		create("draft", "Unfinished wedding thoughts", "Not yet", false)
	})

	It("lists published posts newest first, paged", func() {
		got, meta := slugs("?page_size=1")
		Expect(got).To(Equal([]string{"second-post"}))
		Expect(meta).To(Equal(map[string]any{"page": 1.0, "page_size": 1.0, "total": 2.0, "has_more": true}))
		got, meta = slugs("?page_size=1&page=2")
		Expect(got).To(Equal([]string{"first-post"}))
		Expect(meta).To(HaveKeyWithValue("has_more", false))
	})

	It("searches title, excerpt and body, tolerating partial words", func() {
		got, _ := slugs("?q=wedd")
		Expect(got).To(Equal([]string{"first-post"}))
		got, _ = slugs("?q=logo%20anim")
		Expect(got).To(Equal([]string{"second-post"}))
		got, meta := slugs("?q=%26%7C%21")
		Expect(got).To(HaveLen(2))
		Expect(meta).To(HaveKeyWithValue("total", 2.0))
	})

	It("answers a published post by slug and 404 for drafts and unknown slugs", func() {
		r := client.Do("GET", "/v1/blogs/first-post", tokens.ServiceToken("web"), nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		var b map[string]any
		r.JSON(&b)
		Expect(b).To(HaveKeyWithValue("title", "Making wedding intros"))
		Expect(b["published_at"]).NotTo(BeNil())
		Expect(client.Do("GET", "/v1/blogs/draft", userToken(), nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("GET", "/v1/blogs/nope", userToken(), nil).Status).To(Equal(http.StatusNotFound))
	})

	It("refuses taken slugs and bad fields, and lets only administrators write and delete", func() {
		r := client.Do("POST", "/v1/blogs", adminToken(), map[string]any{"slug": "first-post", "title": "x", "body": "y"})
		Expect(r.Status).To(Equal(http.StatusConflict))
		r = client.Do("POST", "/v1/blogs", adminToken(), map[string]any{"slug": "Bad Slug", "title": "x", "body": "y"})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		r = client.Do("POST", "/v1/blogs", adminToken(), map[string]any{"slug": "ok", "title": "", "body": "y"})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		r = client.Do("POST", "/v1/blogs", userToken(), map[string]any{"slug": "ok", "title": "x", "body": "y"})
		Expect(r.Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("DELETE", "/v1/blogs/first-post", userToken(), nil).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("DELETE", "/v1/blogs/first-post", adminToken(), nil).Status).To(Equal(http.StatusNoContent))
		Expect(client.Do("DELETE", "/v1/blogs/first-post", adminToken(), nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("GET", "/v1/blogs", "", nil).Status).To(Equal(http.StatusUnauthorized))
		Expect(client.Do("GET", "/v1/blogs?page_size=500", userToken(), nil).Status).To(Equal(http.StatusBadRequest))
	})
})

var _ = Describe("comments", func() {
	var containerID, blogID string

	BeforeEach(func() {
		testkit.Truncate(db)
		containerID = seedContainer("wedding-intro")
		r := client.Do("POST", "/v1/blogs", adminToken(), map[string]any{"slug": "news", "title": "News", "body": "b"})
		Expect(r.Status).To(Equal(http.StatusCreated))
		var b map[string]any
		r.JSON(&b)
		blogID = b["id"].(string)
	})

	comment := func(body map[string]any) (int, map[string]any) {
		GinkgoHelper()
		r := client.Do("POST", "/v1/comments", userToken(), body)
		var c map[string]any
		if r.Status == http.StatusCreated {
			r.JSON(&c)
		}
		return r.Status, c
	}
	approved := func(query string) []map[string]any {
		GinkgoHelper()
		r := client.Do("GET", "/v1/comments"+query, userToken(), nil)
		Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
		var page struct{ Data []map[string]any }
		r.JSON(&page)
		return page.Data
	}
	rating := func() (avg float64, count int) {
		GinkgoHelper()
		row := db.Raw(`SELECT rate_avg, rate_count FROM containers WHERE id = ?`, containerID).Row()
		Expect(row.Scan(&avg, &count)).To(Succeed())
		return avg, count
	}

	It("are created pending, hidden until approved, and listed once approved", func() {
		status, c := comment(map[string]any{"content": "Lovely", "blog_id": blogID})
		Expect(status).To(Equal(http.StatusCreated))
		Expect(c).To(HaveKeyWithValue("status", "pending"))
		Expect(approved("?blog_id=" + blogID)).To(BeEmpty())

		r := client.Do("GET", "/v1/comments/pending", adminToken(), nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		var page struct{ Data []map[string]any }
		r.JSON(&page)
		Expect(page.Data).To(ConsistOf(HaveKeyWithValue("id", c["id"])))

		r = client.Do("POST", "/v1/comments/"+c["id"].(string)+"/approve", adminToken(), nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		Expect(approved("?blog_id=" + blogID)).To(ConsistOf(HaveKeyWithValue("content", "Lovely")))
		Expect(client.Do("POST", "/v1/comments/"+c["id"].(string)+"/reject", adminToken(), nil).Status).To(Equal(http.StatusConflict))

		status, reply := comment(map[string]any{"content": "Thanks", "blog_id": blogID, "parent_comment_id": c["id"]})
		Expect(status).To(Equal(http.StatusCreated))
		Expect(reply).To(HaveKeyWithValue("parent_comment_id", c["id"]))
	})

	It("update the template's rating when a rated comment is approved, and not when rejected", func() {
		_, good := comment(map[string]any{"content": "Great", "rate": 5, "container_id": containerID})
		_, ok := comment(map[string]any{"content": "Fine", "rate": 4, "container_id": containerID})
		_, bad := comment(map[string]any{"content": "Meh", "rate": 1, "container_id": containerID})
		Expect(rating()).To(BeZero())

		Expect(client.Do("POST", "/v1/comments/"+good["id"].(string)+"/approve", adminToken(), nil).Status).To(Equal(http.StatusOK))
		Expect(client.Do("POST", "/v1/comments/"+ok["id"].(string)+"/approve", adminToken(), nil).Status).To(Equal(http.StatusOK))
		Expect(client.Do("POST", "/v1/comments/"+bad["id"].(string)+"/reject", adminToken(), nil).Status).To(Equal(http.StatusOK))
		avg, count := rating()
		Expect(avg).To(BeNumerically("~", 4.5, 0.001))
		Expect(count).To(Equal(2))
		Expect(approved("?container_id=" + containerID)).To(HaveLen(2))
	})

	It("refuse bad bodies and unknown targets, storing nothing", func() {
		for _, body := range []map[string]any{
			{"content": "", "blog_id": blogID},
			{"content": "x", "blog_id": blogID, "container_id": containerID},
			{"content": "x", "blog_id": blogID, "rate": 4},
			{"content": "x", "rate": 4},
			{"content": "x", "container_id": containerID, "rate": 6},
		} {
			status, _ := comment(body)
			Expect(status).To(Equal(http.StatusBadRequest), "%v", body)
		}
		for _, body := range []map[string]any{
			{"content": "x", "blog_id": uuid.NewString()},
			{"content": "x", "container_id": uuid.NewString()},
			{"content": "x", "blog_id": blogID, "parent_comment_id": uuid.NewString()},
		} {
			status, _ := comment(body)
			Expect(status).To(Equal(http.StatusNotFound), "%v", body)
		}
		var n int64
		Expect(db.Raw("SELECT count(*) FROM comments").Scan(&n).Error).To(Succeed())
		Expect(n).To(BeZero())
		Expect(client.Do("GET", "/v1/comments?blog_id="+blogID+"&container_id="+containerID, userToken(), nil).Status).
			To(Equal(http.StatusBadRequest))
	})

	It("without a target are about the site in general, listed apart once approved", func() {
		status, general := comment(map[string]any{"content": "Great site"})
		Expect(status).To(Equal(http.StatusCreated))
		Expect(general).To(HaveKeyWithValue("status", "pending"))
		Expect(general).To(HaveKeyWithValue("blog_id", BeNil()))
		Expect(general).To(HaveKeyWithValue("container_id", BeNil()))
		status, onBlog := comment(map[string]any{"content": "On the post", "blog_id": blogID})
		Expect(status).To(Equal(http.StatusCreated))
		for _, id := range []string{general["id"].(string), onBlog["id"].(string)} {
			Expect(client.Do("POST", "/v1/comments/"+id+"/approve", adminToken(), nil).Status).To(Equal(http.StatusOK))
		}
		list := approved("")
		Expect(list).To(HaveLen(1))
		Expect(list[0]).To(HaveKeyWithValue("id", general["id"]))
		status, reply := comment(map[string]any{"content": "Thanks", "parent_comment_id": general["id"]})
		Expect(status).To(Equal(http.StatusCreated))
		Expect(reply).To(HaveKeyWithValue("parent_comment_id", general["id"]))
		status, _ = comment(map[string]any{"content": "Wrong thread", "blog_id": blogID, "parent_comment_id": general["id"]})
		Expect(status).To(Equal(http.StatusNotFound))
	})

	It("may be on an unpublished template, not on a deleted one", func() {
		draft := catContainer(nil)
		status, _ := comment(map[string]any{"content": "Soon?", "container_id": catID(draft), "rate": 5})
		Expect(status).To(Equal(http.StatusCreated))
		catNoContent("DELETE", "/v1/containers/"+catID(draft), nil)
		status, _ = comment(map[string]any{"content": "Gone", "container_id": catID(draft)})
		Expect(status).To(Equal(http.StatusNotFound))
	})

	It("are moderated by administrators only", func() {
		_, c := comment(map[string]any{"content": "x", "blog_id": blogID})
		Expect(client.Do("POST", "/v1/comments/"+c["id"].(string)+"/approve", userToken(), nil).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("POST", "/v1/comments/"+c["id"].(string)+"/reject", userToken(), nil).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("GET", "/v1/comments/pending", userToken(), nil).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("POST", "/v1/comments/"+uuid.NewString()+"/approve", adminToken(), nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("POST", "/v1/comments", "", map[string]any{"content": "x", "blog_id": blogID}).Status).To(Equal(http.StatusUnauthorized))
	})
})

var _ = Describe("slides and home events", func() {
	BeforeEach(func() { testkit.Truncate(db) })

	It("lists active slides by position and lets administrators add and remove them", func() {
		for i, s := range []map[string]any{
			{"title": "Second", "image_url": "https://cdn.example.com/2.jpg", "position": 2},
			{"title": "First", "image_url": "https://cdn.example.com/1.jpg", "position": 1, "link_url": "https://example.com"},
			{"title": "Hidden", "image_url": "https://cdn.example.com/3.jpg", "is_active": false},
		} {
			Expect(client.Do("POST", "/v1/slides", adminToken(), s).Status).To(Equal(http.StatusCreated), "slide %d", i)
		}
		r := client.Do("GET", "/v1/slides", userToken(), nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		var list struct{ Data []map[string]any }
		r.JSON(&list)
		Expect(list.Data).To(HaveLen(2))
		Expect(list.Data[0]).To(HaveKeyWithValue("title", "First"))
		id := list.Data[0]["id"].(string)
		Expect(client.Do("DELETE", "/v1/slides/"+id, userToken(), nil).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("DELETE", "/v1/slides/"+id, adminToken(), nil).Status).To(Equal(http.StatusNoContent))
		Expect(client.Do("DELETE", "/v1/slides/"+id, adminToken(), nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("POST", "/v1/slides", adminToken(), map[string]any{"title": "x", "image_url": "nope"}).Status).To(Equal(http.StatusBadRequest))
		Expect(client.Do("POST", "/v1/slides", userToken(), map[string]any{"title": "x", "image_url": "https://a.b/c"}).Status).To(Equal(http.StatusForbidden))
	})

	It("lists events that have not ended and validates new ones", func() {
		now := time.Now().UTC()
		for _, e := range []map[string]any{
			{"title": "Ongoing", "starts_at": now.Add(-time.Hour), "ends_at": now.Add(time.Hour)},
			{"title": "Ended", "starts_at": now.Add(-2 * time.Hour), "ends_at": now.Add(-time.Hour)},
			{"title": "Open", "starts_at": now.Add(time.Hour), "position": -1},
		} {
			Expect(client.Do("POST", "/v1/home-events", adminToken(), e).Status).To(Equal(http.StatusCreated))
		}
		r := client.Do("GET", "/v1/home-events", userToken(), nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		var list struct{ Data []map[string]any }
		r.JSON(&list)
		Expect(list.Data).To(HaveLen(2))
		Expect(list.Data[0]).To(HaveKeyWithValue("title", "Open"))
		Expect(list.Data[0]).To(HaveKeyWithValue("ends_at", BeNil()))

		bad := map[string]any{"title": "x", "starts_at": now, "ends_at": now.Add(-time.Minute)}
		Expect(client.Do("POST", "/v1/home-events", adminToken(), bad).Status).To(Equal(http.StatusBadRequest))
		Expect(client.Do("POST", "/v1/home-events", userToken(), map[string]any{"title": "x", "starts_at": now}).Status).To(Equal(http.StatusForbidden))
		id := list.Data[1]["id"].(string)
		Expect(client.Do("DELETE", "/v1/home-events/"+id, adminToken(), nil).Status).To(Equal(http.StatusNoContent))
		Expect(client.Do("DELETE", "/v1/home-events/"+id, adminToken(), nil).Status).To(Equal(http.StatusNotFound))
	})
})

var _ = Describe("website settings", func() {
	BeforeEach(func() { testkit.Truncate(db) })

	It("answers only the public subset publicly and everything to administrators", func() {
		tenant := uuid.NewString()
		admin := tokens.UserToken(uuid.NewString(), tenant, true)
		user := tokens.UserToken(uuid.NewString(), tenant, false)

		r := client.Do("GET", "/v1/settings", user, nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		Expect(string(r.Body)).To(MatchJSON(`{}`))

		full := map[string]any{
			"public":  map[string]any{"site_name": "Motion", "theme": map[string]any{"color": "#ff0000"}},
			"private": map[string]any{"smtp_host": "mail.internal"},
		}
		r = client.Do("PUT", "/v1/settings", admin, full)
		Expect(r.Status).To(Equal(http.StatusOK))

		r = client.Do("GET", "/v1/settings", user, nil)
		Expect(string(r.Body)).To(MatchJSON(`{"site_name": "Motion", "theme": {"color": "#ff0000"}}`))
		r = client.Do("GET", "/v1/settings?tenant_id="+tenant, tokens.ServiceToken("web"), nil)
		Expect(string(r.Body)).To(MatchJSON(`{"site_name": "Motion", "theme": {"color": "#ff0000"}}`))
		r = client.Do("GET", "/v1/settings/full", admin, nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		Expect(string(r.Body)).To(MatchJSON(`{"public": {"site_name": "Motion", "theme": {"color": "#ff0000"}}, "private": {"smtp_host": "mail.internal"}}`))

		other := tokens.UserToken(uuid.NewString(), uuid.NewString(), false)
		Expect(string(client.Do("GET", "/v1/settings", other, nil).Body)).To(MatchJSON(`{}`))
	})

	It("answers {} publicly without a tenant, and needs an administrator to change or read everything", func() {
		r := client.Do("GET", "/v1/settings", tokens.ServiceToken("web"), nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		Expect(string(r.Body)).To(MatchJSON(`{}`))
		Expect(client.Do("GET", "/v1/settings/full", tokens.ServiceToken("web"), nil).Status).To(Equal(http.StatusForbidden))
		body := map[string]any{"public": map[string]any{}, "private": map[string]any{}}
		Expect(client.Do("PUT", "/v1/settings", userToken(), body).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("GET", "/v1/settings/full", userToken(), nil).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("PUT", "/v1/settings", adminToken(), `{"public": 3}`).Status).To(Equal(http.StatusBadRequest))
		big := map[string]any{"public": map[string]any{"blob": strings.Repeat("x", 70<<10)}, "private": map[string]any{}}
		Expect(client.Do("PUT", "/v1/settings", adminToken(), big).Status).To(Equal(http.StatusRequestEntityTooLarge))
	})
})
