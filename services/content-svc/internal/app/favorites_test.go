package app_test

import (
	"net/http"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
)

var _ = Describe("favorites", func() {
	var alice, bob string
	var t1, t2 catJSON

	BeforeEach(func() {
		testkit.Truncate(db)
		alice = tokens.UserToken(uuid.NewString(), uuid.NewString(), false)
		bob = tokens.UserToken(uuid.NewString(), uuid.NewString(), false)
		t1, t2 = catPublished(nil), catPublished(nil)
	})

	post := func(tok, path string, body any) catJSON {
		GinkgoHelper()
		r := client.Do("POST", path, tok, body)
		Expect(r.Status).To(Equal(http.StatusCreated), string(r.Body))
		var out catJSON
		r.JSON(&out)
		return out
	}

	It("keep a user's folders and templates, seen only by that user", func() {
		folder := post(alice, "/v1/favorites/folders", catJSON{"name": "Weddings", "description": "for June"})
		Expect(folder).To(HaveKeyWithValue("item_count", 0.0))
		fav := post(alice, "/v1/favorites/containers", catJSON{"container_id": catID(t1), "folder_id": catID(folder), "note": "nice"})
		Expect(fav).To(HaveKeyWithValue("folder_id", catID(folder)))
		Expect(fav).To(HaveKeyWithValue("note", "nice"))
		post(alice, "/v1/favorites/containers", catJSON{"container_id": catID(t2)})

		folders := catGet("/v1/favorites/folders", alice)["data"].([]any)
		Expect(folders).To(HaveLen(1))
		Expect(folders[0]).To(HaveKeyWithValue("item_count", 1.0))
		page := catGet("/v1/favorites/containers", alice)
		Expect(page["meta"]).To(HaveKeyWithValue("total", 2.0))
		items := page["data"].([]any)
		Expect(items[0]).To(HaveKeyWithValue("container_id", catID(t2)))
		Expect(items[1].(map[string]any)["template"]).To(HaveKeyWithValue("slug", t1["slug"]))
		inFolder := catGet("/v1/favorites/containers?folder_id="+catID(folder), alice)
		Expect(inFolder["data"]).To(HaveLen(1))

		Expect(catGet("/v1/favorites/folders", bob)["data"]).To(BeEmpty())
		Expect(catGet("/v1/favorites/containers", bob)["data"]).To(BeEmpty())
		Expect(client.Do("GET", "/v1/favorites/containers?folder_id="+catID(folder), bob, nil).Status).To(Equal(http.StatusNotFound))
		r := client.Do("POST", "/v1/favorites/containers", bob, catJSON{"container_id": catID(t1), "folder_id": catID(folder)})
		Expect(r.Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("DELETE", "/v1/favorites/containers?container_id="+catID(t1), bob, nil).Status).To(Equal(http.StatusNotFound))
	})

	It("move a template when it is added again, and forget it when removed", func() {
		a := post(alice, "/v1/favorites/folders", catJSON{"name": "A"})
		b := post(alice, "/v1/favorites/folders", catJSON{"name": "B"})
		post(alice, "/v1/favorites/containers", catJSON{"container_id": catID(t1), "folder_id": catID(a), "note": "first"})
		moved := post(alice, "/v1/favorites/containers", catJSON{"container_id": catID(t1), "folder_id": catID(b), "note": "second"})
		Expect(moved).To(HaveKeyWithValue("folder_id", catID(b)))
		Expect(catGet("/v1/favorites/containers", alice)["meta"]).To(HaveKeyWithValue("total", 1.0))

		r := client.Do("DELETE", "/v1/favorites/containers?container_id="+catID(t1), alice, nil)
		Expect(r.Status).To(Equal(http.StatusNoContent))
		Expect(catGet("/v1/favorites/containers", alice)["data"]).To(BeEmpty())
		Expect(client.Do("DELETE", "/v1/favorites/containers?container_id="+catID(t1), alice, nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("DELETE", "/v1/favorites/containers", alice, nil).Status).To(Equal(http.StatusBadRequest))
	})

	It("hide templates out of the catalog, and refuse deleted or unknown ones", func() {
		post(alice, "/v1/favorites/containers", catJSON{"container_id": catID(t1)})
		post(alice, "/v1/favorites/containers", catJSON{"container_id": catID(t2)})
		catNoContent("POST", "/v1/containers/"+catID(t1)+"/unpublish", nil)
		catNoContent("DELETE", "/v1/containers/"+catID(t2), nil)
		Expect(catGet("/v1/favorites/containers", alice)["data"]).To(BeEmpty())
		r := client.Do("POST", "/v1/favorites/containers", alice, catJSON{"container_id": catID(t2)})
		Expect(r.Status).To(Equal(http.StatusNotFound))
		r = client.Do("POST", "/v1/favorites/containers", alice, catJSON{"container_id": uuid.NewString()})
		Expect(r.Status).To(Equal(http.StatusNotFound))

		draft := catContainer(nil)
		post(alice, "/v1/favorites/containers", catJSON{"container_id": catID(draft)})
		Expect(catGet("/v1/favorites/containers", alice)["data"]).To(BeEmpty())
		catNoContent("POST", "/v1/containers/"+catID(draft)+"/publish", nil)
		Expect(catGet("/v1/favorites/containers", alice)["data"]).To(HaveLen(1))
	})

	It("refuse bad input, taken folder names and missing tokens", func() {
		post(alice, "/v1/favorites/folders", catJSON{"name": "Mine"})
		Expect(client.Do("POST", "/v1/favorites/folders", alice, catJSON{"name": "mine"}).Status).To(Equal(http.StatusConflict))
		post(bob, "/v1/favorites/folders", catJSON{"name": "Mine"})
		Expect(client.Do("POST", "/v1/favorites/folders", alice, catJSON{"name": ""}).Status).To(Equal(http.StatusBadRequest))
		Expect(client.Do("POST", "/v1/favorites/containers", alice, catJSON{"container_id": catID(t1), "folder_id": uuid.NewString()}).Status).
			To(Equal(http.StatusNotFound))
		Expect(client.Do("POST", "/v1/favorites/containers", alice, catJSON{"note": "no id"}).Status).To(Equal(http.StatusBadRequest))
		Expect(client.Do("GET", "/v1/favorites/containers?page_size=500", alice, nil).Status).To(Equal(http.StatusBadRequest))
		Expect(client.Do("GET", "/v1/favorites/containers?page=100000", alice, nil).Status).To(Equal(http.StatusOK))
		r := client.Do("GET", "/v1/favorites/containers?page=100001", alice, nil)
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(r.Body).To(ContainSubstring(`"code":"invalid_paging"`))
		Expect(client.Do("GET", "/v1/favorites/folders", "", nil).Status).To(Equal(http.StatusUnauthorized))
	})
})
