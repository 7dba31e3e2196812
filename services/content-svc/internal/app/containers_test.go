package app_test

import (
	"net/http"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
)

var _ = Describe("tags and categories", func() {
	BeforeEach(func() { testkit.Truncate(db) })

	It("lets an administrator create a tag and refuses a taken or malformed slug", func() {
		t := catCreate("/v1/tags", catJSON{"slug": "wedding", "name": "Wedding"})
		Expect(t).To(HaveKeyWithValue("slug", "wedding"))
		r := client.Do("POST", "/v1/tags", catAdmin(), catJSON{"slug": "wedding", "name": "Other"})
		Expect(r.Status).To(Equal(http.StatusConflict))
		r = client.Do("POST", "/v1/tags", catAdmin(), catJSON{"slug": "Not A Slug", "name": "X"})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(ContainSubstring(`"field":"slug"`))
	})

	It("lists categories by position and lets only administrators create them", func() {
		catCreate("/v1/categories", catJSON{"slug": "intro", "name": "Intro", "position": 2})
		catCreate("/v1/categories", catJSON{"slug": "promo", "name": "Promo", "position": 1, "description": "Ads"})
		body := catGet("/v1/categories", tokens.ServiceToken("web"))
		data := body["data"].([]any)
		Expect(data).To(HaveLen(2))
		Expect(data[0]).To(HaveKeyWithValue("slug", "promo"))
		Expect(data[0]).To(HaveKeyWithValue("description", "Ads"))

		r := client.Do("POST", "/v1/categories", catUser(), catJSON{"slug": "x", "name": "X"})
		Expect(r.Status).To(Equal(http.StatusForbidden))
		r = client.Do("POST", "/v1/categories", "", catJSON{"slug": "x", "name": "X"})
		Expect(r.Status).To(Equal(http.StatusUnauthorized))
		r = client.Do("POST", "/v1/categories", catAdmin(), catJSON{"slug": "intro", "name": "Again"})
		Expect(r.Status).To(Equal(http.StatusConflict))
		r = client.Do("POST", "/v1/categories", catAdmin(), catJSON{"slug": "no-name"})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		r = client.Do("GET", "/v1/categories", "", nil)
		Expect(r.Status).To(Equal(http.StatusUnauthorized))
	})
})

var _ = Describe("containers", func() {
	BeforeEach(func() { testkit.Truncate(db) })

	It("start unpublished with their categories and tags", func() {
		cat := catCreate("/v1/categories", catJSON{"slug": "intro", "name": "Intro"})
		tag := catCreate("/v1/tags", catJSON{"slug": "clean", "name": "Clean"})
		c := catContainer(catJSON{"description": "A clean intro", "is_premium": true,
			"category_ids": []string{catID(cat)}, "tag_ids": []string{catID(tag), catID(tag)}})
		Expect(c).To(HaveKeyWithValue("is_published", false))
		Expect(c).To(HaveKeyWithValue("is_premium", true))
		Expect(c).To(HaveKeyWithValue("published_at", BeNil()))
		Expect(c["category_ids"]).To(ConsistOf(catID(cat)))
		Expect(c["tag_ids"]).To(ConsistOf(catID(tag)))
	})

	It("refuse missing fields, unknown references and a taken slug, changing nothing", func() {
		r := client.Do("POST", "/v1/containers", catAdmin(), catJSON{"slug": "x"})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(ContainSubstring(`"field":"name"`))
		Expect(string(r.Body)).To(ContainSubstring(`"field":"primary_mode"`))
		r = client.Do("POST", "/v1/containers", catAdmin(), catJSON{"slug": "x", "name": "X", "primary_mode": "video",
			"category_ids": []string{uuid.NewString()}})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(ContainSubstring(`"field":"category_ids"`))
		var n int64
		Expect(db.Table("containers").Count(&n).Error).To(Succeed())
		Expect(n).To(BeZero())

		catContainer(catJSON{"slug": "taken"})
		r = client.Do("POST", "/v1/containers", catAdmin(), catJSON{"slug": "taken", "name": "X", "primary_mode": "video"})
		Expect(r.Status).To(Equal(http.StatusConflict))
		r = client.Do("POST", "/v1/containers", catAdmin(), "{not json")
		Expect(r.Status).To(Equal(http.StatusBadRequest))
	})

	It("are created and changed only by administrators", func() {
		body := catJSON{"slug": "x", "name": "X", "primary_mode": "video"}
		Expect(client.Do("POST", "/v1/containers", catUser(), body).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("POST", "/v1/containers", tokens.ServiceToken("web"), body).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("POST", "/v1/containers", "", body).Status).To(Equal(http.StatusUnauthorized))
		c := catContainer(nil)
		path := "/v1/containers/" + catID(c)
		Expect(client.Do("PATCH", path, catUser(), catJSON{"name": "Y"}).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("DELETE", path, catUser(), nil).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("POST", path+"/publish", catUser(), nil).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("POST", path+"/unpublish", catUser(), nil).Status).To(Equal(http.StatusForbidden))
	})

	It("are patched field by field, with given id lists replacing the old ones", func() {
		t1 := catCreate("/v1/tags", catJSON{"slug": "a", "name": "A"})
		t2 := catCreate("/v1/tags", catJSON{"slug": "b", "name": "B"})
		c := catContainer(catJSON{"description": "keep me", "tag_ids": []string{catID(t1)}})
		r := client.Do("PATCH", "/v1/containers/"+catID(c), catAdmin(), catJSON{"name": "Renamed", "tag_ids": []string{catID(t2)}})
		Expect(r.Status).To(Equal(http.StatusOK))
		var got catJSON
		r.JSON(&got)
		Expect(got).To(HaveKeyWithValue("name", "Renamed"))
		Expect(got).To(HaveKeyWithValue("description", "keep me"))
		Expect(got["tag_ids"]).To(ConsistOf(catID(t2)))

		r = client.Do("PATCH", "/v1/containers/"+catID(c), catAdmin(), catJSON{"name": ""})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		r = client.Do("PATCH", "/v1/containers/"+uuid.NewString(), catAdmin(), catJSON{"name": "Y"})
		Expect(r.Status).To(Equal(http.StatusNotFound))
		r = client.Do("PATCH", "/v1/containers/not-a-uuid", catAdmin(), catJSON{"name": "Y"})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		other := catContainer(nil)
		r = client.Do("PATCH", "/v1/containers/"+catID(other), catAdmin(), catJSON{"slug": c["slug"]})
		Expect(r.Status).To(Equal(http.StatusConflict))
	})

	It("are published and unpublished with the reason recorded", func() {
		c := catContainer(nil)
		path := "/v1/containers/" + catID(c)
		catNoContent("POST", path+"/publish", nil)
		catNoContent("POST", path+"/publish", nil)
		Expect(catCardIDs(catGet("/v1/templates", catUser()))).To(ConsistOf(catID(c)))

		catNoContent("POST", path+"/unpublish", catJSON{"reason": "broken render"})
		Expect(catCardIDs(catGet("/v1/templates", catUser()))).To(BeEmpty())
		r := client.Do("PATCH", path, catAdmin(), catJSON{})
		var got catJSON
		r.JSON(&got)
		Expect(got).To(HaveKeyWithValue("is_published", false))
		Expect(got).To(HaveKeyWithValue("unpublish_reason", "broken render"))
		var reasons []string
		Expect(db.Raw(`SELECT action || ':' || reason FROM container_publications WHERE container_id = ? ORDER BY created_at`, catID(c)).
			Scan(&reasons).Error).To(Succeed())
		Expect(reasons).To(Equal([]string{"publish:", "unpublish:broken render"}))

		catNoContent("POST", path+"/publish", nil)
		catNoContent("POST", path+"/unpublish", nil)
		Expect(client.Do("POST", "/v1/containers/"+uuid.NewString()+"/publish", catAdmin(), nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("POST", "/v1/containers/"+uuid.NewString()+"/unpublish", catAdmin(), nil).Status).To(Equal(http.StatusNotFound))
	})

	It("are soft-deleted: gone from every read, kept in the database, slug freed", func() {
		c := catPublished(catJSON{"slug": "gone"})
		p := catProject(catID(c), 1920, 1080, nil)
		catNoContent("DELETE", "/v1/containers/"+catID(c), nil)

		Expect(catCardIDs(catGet("/v1/templates", catUser()))).To(BeEmpty())
		Expect(client.Do("GET", "/v1/templates/gone", catUser(), nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("GET", "/v1/templates/"+catID(c)+"/projects", catUser(), nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("GET", "/v1/projects/"+catID(p), catAdmin(), nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("PATCH", "/v1/containers/"+catID(c), catAdmin(), catJSON{"name": "x"}).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("DELETE", "/v1/containers/"+catID(c), catAdmin(), nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("POST", "/v1/containers/"+catID(c)+"/publish", catAdmin(), nil).Status).To(Equal(http.StatusNotFound))

		var n int64
		Expect(db.Table("containers").Where("id = ? AND deleted_at IS NOT NULL", catID(c)).Count(&n).Error).To(Succeed())
		Expect(n).To(Equal(int64(1)))
		catContainer(catJSON{"slug": "gone"})
	})
})

var _ = Describe("projects", func() {
	BeforeEach(func() { testkit.Truncate(db) })

	It("are created by administrators, with the aspect derived from the size", func() {
		c := catContainer(nil)
		p := catProject(catID(c), 1080, 1920, catJSON{"resolution": "1080p", "vip_factor": 1.5})
		Expect(p).To(HaveKeyWithValue("aspect", "9:16"))
		Expect(p).To(HaveKeyWithValue("container_id", catID(c)))
		Expect(p).To(HaveKeyWithValue("vip_factor", BeNumerically("==", 1.5)))
		Expect(p).To(HaveKeyWithValue("project_server_id", BeNil()))
		Expect(p).To(HaveKeyWithValue("aep_file_url", ""))
		odd := catProject(catID(c), 1000, 300, nil)
		Expect(odd).To(HaveKeyWithValue("aspect", ""))
		forced := catProject(catID(c), 1000, 300, catJSON{"aspect": "1:1"})
		Expect(forced).To(HaveKeyWithValue("aspect", "1:1"))
	})

	It("refuse bad fields, unknown containers and render servers, and non-administrators", func() {
		c := catContainer(nil)
		ok := catJSON{"container_id": catID(c), "name": "P", "original_width": 1920, "original_height": 1080,
			"project_duration_sec": 10, "choose_mode": "scenes"}
		with := func(kv ...any) catJSON {
			b := catJSON{}
			for k, v := range ok {
				b[k] = v
			}
			for i := 0; i+1 < len(kv); i += 2 {
				b[kv[i].(string)] = kv[i+1]
			}
			return b
		}
		Expect(client.Do("POST", "/v1/projects", catAdmin(), with("original_width", 0)).Status).To(Equal(http.StatusBadRequest))
		Expect(client.Do("POST", "/v1/projects", catAdmin(), with("aspect", "3:2")).Status).To(Equal(http.StatusBadRequest))
		Expect(client.Do("POST", "/v1/projects", catAdmin(), with("min_duration_sec", 20, "max_duration_sec", 10)).Status).To(Equal(http.StatusBadRequest))
		Expect(client.Do("POST", "/v1/projects", catAdmin(), with("project_server_id", uuid.NewString())).Status).To(Equal(http.StatusBadRequest))
		Expect(client.Do("POST", "/v1/projects", catAdmin(), with("container_id", uuid.NewString())).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("POST", "/v1/projects", catAdmin(), catJSON{"name": "P"}).Status).To(Equal(http.StatusBadRequest))
		Expect(client.Do("POST", "/v1/projects", catUser(), ok).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("POST", "/v1/projects", "", ok).Status).To(Equal(http.StatusUnauthorized))
		var n int64
		Expect(db.Table("projects").Count(&n).Error).To(Succeed())
		Expect(n).To(BeZero())
	})

	It("are read by users only while published, by administrators and services always", func() {
		c := catContainer(nil)
		p := catProject(catID(c), 1920, 1080, nil)
		path := "/v1/projects/" + catID(p)
		Expect(client.Do("GET", path, catUser(), nil).Status).To(Equal(http.StatusNotFound))
		Expect(catGet(path, catAdmin())).To(HaveKeyWithValue("id", catID(p)))
		Expect(catGet(path, tokens.ServiceToken("render"))).To(HaveKeyWithValue("id", catID(p)))
		catNoContent("POST", "/v1/containers/"+catID(c)+"/publish", nil)
		Expect(catGet(path, catUser())).To(HaveKeyWithValue("name", "1920x1080"))
		Expect(client.Do("GET", "/v1/projects/"+uuid.NewString(), catUser(), nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("GET", "/v1/projects/nope", catUser(), nil).Status).To(Equal(http.StatusBadRequest))
		Expect(client.Do("GET", path, "", nil).Status).To(Equal(http.StatusUnauthorized))
	})

	It("are patched and deleted by administrators", func() {
		c := catContainer(nil)
		p := catProject(catID(c), 1920, 1080, nil)
		path := "/v1/projects/" + catID(p)
		Expect(client.Do("PATCH", path, catUser(), catJSON{"name": "x"}).Status).To(Equal(http.StatusForbidden))
		r := client.Do("PATCH", path, catAdmin(), catJSON{"original_width": 1080, "original_height": 1080, "name": "Square"})
		Expect(r.Status).To(Equal(http.StatusOK))
		var got catJSON
		r.JSON(&got)
		Expect(got).To(HaveKeyWithValue("aspect", "1:1"))
		Expect(got).To(HaveKeyWithValue("name", "Square"))
		Expect(got).To(HaveKeyWithValue("choose_mode", "scenes"))
		Expect(client.Do("PATCH", path, catAdmin(), catJSON{"free_fps": 1000}).Status).To(Equal(http.StatusBadRequest))
		Expect(client.Do("PATCH", "/v1/projects/"+uuid.NewString(), catAdmin(), catJSON{"name": "x"}).Status).To(Equal(http.StatusNotFound))

		Expect(client.Do("DELETE", path, catUser(), nil).Status).To(Equal(http.StatusForbidden))
		catNoContent("DELETE", path, nil)
		Expect(client.Do("GET", path, catAdmin(), nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("DELETE", path, catAdmin(), nil).Status).To(Equal(http.StatusNotFound))
	})
})
