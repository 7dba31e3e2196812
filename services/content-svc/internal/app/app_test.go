package app_test

import (
	"net/http"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
)

var _ = Describe("tags", func() {
	BeforeEach(func() { testkit.Truncate(db) })

	It("are listed by name for users and services alike", func() {
		Expect(db.Exec(`INSERT INTO tags (id, slug, name) VALUES (?, 'wedding', 'Wedding'), (?, 'corporate', 'Corporate')`,
			uuid.Must(uuid.NewV7()).String(), uuid.Must(uuid.NewV7()).String()).Error).To(Succeed())
		for _, tok := range []string{tokens.UserToken(uuid.NewString(), uuid.NewString(), false), tokens.ServiceToken("render")} {
			r := client.Do("GET", "/v1/tags", tok, nil)
			Expect(r.Status).To(Equal(http.StatusOK))
			var body struct {
				Data []map[string]any `json:"data"`
			}
			r.JSON(&body)
			Expect(body.Data).To(HaveLen(2))
			Expect(body.Data[0]).To(HaveKeyWithValue("name", "Corporate"))
			Expect(body.Data[1]).To(HaveKeyWithValue("slug", "wedding"))
		}
	})

	It("need a token", func() {
		r := client.Do("GET", "/v1/tags", "", nil)
		Expect(r.Status).To(Equal(http.StatusUnauthorized))
		Expect(r.Header.Get("Content-Type")).To(HavePrefix("application/problem+json"))
	})
})

var _ = Describe("render servers", func() {
	BeforeEach(func() { testkit.Truncate(db) })

	It("are listed for a service token", func() {
		Expect(db.Exec(`INSERT INTO project_servers (id, name, base_url, region, max_parallel_renders) VALUES (?, 'ams-1', 'http://render-ams-1:9000', 'eu', 4)`,
			uuid.Must(uuid.NewV7()).String()).Error).To(Succeed())
		r := client.Do("GET", "/v1/project-servers", tokens.ServiceToken("render"), nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		var body struct {
			Data []map[string]any `json:"data"`
		}
		r.JSON(&body)
		Expect(body.Data).To(HaveLen(1))
		Expect(body.Data[0]).To(HaveKeyWithValue("name", "ams-1"))
		Expect(body.Data[0]).To(HaveKeyWithValue("max_parallel_renders", BeNumerically("==", 4)))
	})

	It("are refused to a user token, even an administrator's", func() {
		for _, admin := range []bool{false, true} {
			r := client.Do("GET", "/v1/project-servers", tokens.UserToken(uuid.NewString(), uuid.NewString(), admin), nil)
			Expect(r.Status).To(Equal(http.StatusForbidden))
		}
	})
})
