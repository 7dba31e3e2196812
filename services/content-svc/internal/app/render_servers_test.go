package app_test

import (
	"net/http"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
)

var _ = Describe("render server administration", func() {
	BeforeEach(func() { testkit.Truncate(db) })

	create := func(name string) map[string]any {
		GinkgoHelper()
		r := client.Do("POST", "/v1/project-servers", adminToken(), map[string]any{
			"name": name, "base_url": "http://render-" + name + ":9000", "region": "eu", "max_parallel_renders": 3,
		})
		Expect(r.Status).To(Equal(http.StatusCreated), string(r.Body))
		var s map[string]any
		r.JSON(&s)
		return s
	}

	It("creates, reads, changes and deletes servers, which services then see", func() {
		s := create("ams-1")
		Expect(s).To(HaveKeyWithValue("is_active", true))
		id := s["id"].(string)

		r := client.Do("GET", "/v1/project-servers/"+id, adminToken(), nil)
		Expect(r.Status).To(Equal(http.StatusOK))

		r = client.Do("PATCH", "/v1/project-servers/"+id, adminToken(), map[string]any{"is_active": false, "max_parallel_renders": 8})
		Expect(r.Status).To(Equal(http.StatusOK))
		r.JSON(&s)
		Expect(s).To(HaveKeyWithValue("is_active", false))
		Expect(s).To(HaveKeyWithValue("max_parallel_renders", 8.0))
		Expect(s).To(HaveKeyWithValue("name", "ams-1"))

		var list struct{ Data []map[string]any }
		r = client.Do("GET", "/v1/project-servers", tokens.ServiceToken("render"), nil)
		r.JSON(&list)
		Expect(list.Data).To(ConsistOf(HaveKeyWithValue("max_parallel_renders", 8.0)))
		r = client.Do("GET", "/v1/admin/project-servers", adminToken(), nil)
		Expect(r.Status).To(Equal(http.StatusOK))

		Expect(client.Do("DELETE", "/v1/project-servers/"+id, adminToken(), nil).Status).To(Equal(http.StatusNoContent))
		Expect(client.Do("GET", "/v1/project-servers/"+id, adminToken(), nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("DELETE", "/v1/project-servers/"+id, adminToken(), nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("PATCH", "/v1/project-servers/"+id, adminToken(), map[string]any{"region": "us"}).Status).To(Equal(http.StatusNotFound))
	})

	It("refuses a taken name and bad fields, changing nothing", func() {
		create("ams-1")
		other := create("ams-2")
		r := client.Do("POST", "/v1/project-servers", adminToken(), map[string]any{"name": "ams-1", "base_url": "http://x:1"})
		Expect(r.Status).To(Equal(http.StatusConflict))
		r = client.Do("PATCH", "/v1/project-servers/"+other["id"].(string), adminToken(), map[string]any{"name": "ams-1"})
		Expect(r.Status).To(Equal(http.StatusConflict))
		for _, body := range []map[string]any{
			{"name": "", "base_url": "http://x:1"},
			{"name": "x", "base_url": "not a url"},
			{"name": "x", "base_url": "http://x:1", "max_parallel_renders": 0},
		} {
			Expect(client.Do("POST", "/v1/project-servers", adminToken(), body).Status).To(Equal(http.StatusBadRequest))
		}
		r = client.Do("PATCH", "/v1/project-servers/"+other["id"].(string), adminToken(), map[string]any{"base_url": "ftp://x"})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		r = client.Do("GET", "/v1/project-servers/"+other["id"].(string), adminToken(), nil)
		var s map[string]any
		r.JSON(&s)
		Expect(s).To(HaveKeyWithValue("base_url", "http://render-ams-2:9000"))
		Expect(client.Do("GET", "/v1/project-servers/not-a-uuid", adminToken(), nil).Status).To(Equal(http.StatusBadRequest))
	})

	It("is for administrators only", func() {
		body := map[string]any{"name": "x", "base_url": "http://x:1"}
		Expect(client.Do("POST", "/v1/project-servers", userToken(), body).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("POST", "/v1/project-servers", tokens.ServiceToken("render"), body).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("POST", "/v1/project-servers", "", body).Status).To(Equal(http.StatusUnauthorized))
		Expect(client.Do("GET", "/v1/admin/project-servers", userToken(), nil).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("GET", "/v1/project-servers/"+uuid.NewString(), userToken(), nil).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("PATCH", "/v1/project-servers/"+uuid.NewString(), userToken(), map[string]any{}).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("DELETE", "/v1/project-servers/"+uuid.NewString(), userToken(), nil).Status).To(Equal(http.StatusForbidden))
	})
})
