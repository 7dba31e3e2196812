package app_test

import (
	"net/http"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
)

var _ = Describe("SVG previews of unpublished content", func() {
	var sceneID, containerID string

	BeforeEach(func() {
		testkit.Truncate(db)
		sceneID = seedScene()
		Expect(db.Raw(`SELECT p.container_id FROM scenes s JOIN projects p ON p.id = s.project_id WHERE s.id = ?`, sceneID).
			Scan(&containerID).Error).To(Succeed())
		Expect(db.Exec(`UPDATE containers SET is_published = false WHERE id = ?`, containerID).Error).To(Succeed())
	})

	generate := func(token, targetID string) testkit.Response {
		GinkgoHelper()
		body, ct := multipartBody(map[string]string{"target_type": "scene", "target_id": targetID,
			"color_keys": `[{"element_key":"bg","current_color":"#fff"}]`}, formFile{"image", "drop.png", quadrants(quadrantColors, encodePNG)})
		return client.Do("POST", "/v1/svg-previews/generate", token, body, "Content-Type", ct)
	}
	// notFound answers the code and detail of a 404, which must not tell an invisible record from an unknown one.
	notFound := func(r testkit.Response) [2]string {
		GinkgoHelper()
		Expect(r.Status).To(Equal(http.StatusNotFound), string(r.Body))
		var p map[string]any
		r.JSON(&p)
		return [2]string{p["code"].(string), p["detail"].(string)}
	}

	It("are invisible to plain users, with the 404 of an unknown id, and visible to administrators", func() {
		Expect(client.Do("GET", "/v1/scenes/"+sceneID, userToken(), nil).Status).To(Equal(http.StatusNotFound))
		Expect(notFound(generate(userToken(), sceneID))).To(Equal(notFound(generate(userToken(), uuid.NewString()))))

		r := generate(adminToken(), sceneID)
		Expect(r.Status).To(Equal(http.StatusAccepted), string(r.Body))
		var accepted map[string]string
		r.JSON(&accepted)
		id := accepted["svg_preview_id"]

		Expect(notFound(client.Do("GET", "/v1/svg-previews/"+id, userToken(), nil))).
			To(Equal(notFound(client.Do("GET", "/v1/svg-previews/"+uuid.NewString(), userToken(), nil))))
		Expect(notFound(client.Do("GET", "/v1/scenes/"+sceneID+"/svg-preview", userToken(), nil))).
			To(Equal(notFound(client.Do("GET", "/v1/scenes/"+uuid.NewString()+"/svg-preview", userToken(), nil))))

		Expect(client.Do("GET", "/v1/svg-previews/"+id, adminToken(), nil).Status).To(Equal(http.StatusOK))
		Expect(client.Do("GET", "/v1/scenes/"+sceneID+"/svg-preview", tokens.ServiceToken("render"), nil).Status).To(Equal(http.StatusOK))

		Expect(db.Exec(`UPDATE containers SET is_published = true WHERE id = ?`, containerID).Error).To(Succeed())
		Expect(client.Do("GET", "/v1/svg-previews/"+id, userToken(), nil).Status).To(Equal(http.StatusOK))
		Expect(client.Do("GET", "/v1/scenes/"+sceneID+"/svg-preview", userToken(), nil).Status).To(Equal(http.StatusOK))
	})
})
