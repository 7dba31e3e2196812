package app_test

import (
	"net/http"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
)

// catEditorProject creates a published template with one project and answers the project id.
func catEditorProject() string {
	GinkgoHelper()
	c := catPublished(nil)
	return catID(catProject(catID(c), 1920, 1080, nil))
}

func catScene(projectID, key string) catJSON {
	GinkgoHelper()
	return catCreate("/v1/projects/"+projectID+"/scenes", catJSON{"key": key, "title": "Scene " + key})
}

func catSceneKeys(projectID string) []string {
	GinkgoHelper()
	body := catGet("/v1/projects/"+projectID+"/scenes", catUser())
	var keys []string
	for _, d := range body["data"].([]any) {
		keys = append(keys, d.(map[string]any)["key"].(string))
	}
	return keys
}

var _ = Describe("scenes", func() {
	var project string

	BeforeEach(func() {
		testkit.Truncate(db)
		project = catEditorProject()
	})

	It("are appended in order and read back with their fields", func() {
		s1 := catCreate("/v1/projects/"+project+"/scenes", catJSON{"key": "intro", "title": "Intro",
			"localized_title": map[string]string{"fr": "Intro FR"}, "scene_type": "intro", "duration_sec": 4.5})
		s2 := catScene(project, "main")
		Expect(s1).To(HaveKeyWithValue("position", 0.0))
		Expect(s2).To(HaveKeyWithValue("position", 1.0))
		Expect(s2).To(HaveKeyWithValue("scene_type", "normal"))
		Expect(catSceneKeys(project)).To(Equal([]string{"intro", "main"}))

		full := catGet("/v1/scenes/"+catID(s1), catUser())
		Expect(full).To(HaveKeyWithValue("localized_title", map[string]any{"fr": "Intro FR"}))
		Expect(full).To(HaveKeyWithValue("duration_sec", 4.5))
		Expect(full).To(HaveKeyWithValue("contents", BeEmpty()))
	})

	It("refuse a bad or taken key, unknown projects and non-administrators", func() {
		catScene(project, "intro")
		path := "/v1/projects/" + project + "/scenes"
		Expect(client.Do("POST", path, catAdmin(), catJSON{"key": "intro"}).Status).To(Equal(http.StatusConflict))
		Expect(client.Do("POST", path, catAdmin(), catJSON{"key": "has space"}).Status).To(Equal(http.StatusBadRequest))
		Expect(client.Do("POST", path, catAdmin(), catJSON{"key": "k", "duration_sec": -1}).Status).To(Equal(http.StatusBadRequest))
		Expect(client.Do("POST", "/v1/projects/"+uuid.NewString()+"/scenes", catAdmin(), catJSON{"key": "x"}).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("POST", path, catUser(), catJSON{"key": "x"}).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("GET", path, "", nil).Status).To(Equal(http.StatusUnauthorized))
		Expect(client.Do("GET", "/v1/projects/"+uuid.NewString()+"/scenes", catUser(), nil).Status).To(Equal(http.StatusNotFound))
	})

	It("stop at 500 per project", func() {
		Expect(db.Exec(`INSERT INTO scenes (id, project_id, key, position) SELECT gen_random_uuid(), ?, 'k' || i, i FROM generate_series(0, 499) i`,
			project).Error).To(Succeed())
		r := client.Do("POST", "/v1/projects/"+project+"/scenes", catAdmin(), catJSON{"key": "one-more"})
		Expect(r.Status).To(Equal(http.StatusConflict))
		Expect(string(r.Body)).To(ContainSubstring("limit_reached"))
	})

	It("of an unpublished template are read by administrators and services only", func() {
		c := catContainer(nil)
		p := catID(catProject(catID(c), 1920, 1080, nil))
		s := catScene(p, "intro")
		Expect(client.Do("GET", "/v1/projects/"+p+"/scenes", catUser(), nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("GET", "/v1/scenes/"+catID(s), catUser(), nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("GET", "/v1/scenes/"+catID(s)+"/elements", catUser(), nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("GET", "/v1/projects/"+p+"/full", catUser(), nil).Status).To(Equal(http.StatusNotFound))
		catGet("/v1/scenes/"+catID(s), tokens.ServiceToken("render"))
		catGet("/v1/projects/"+p+"/full", catAdmin())
	})

	It("are patched and deleted by administrators", func() {
		s := catScene(project, "intro")
		other := catScene(project, "outro")
		path := "/v1/scenes/" + catID(s)
		r := client.Do("PATCH", path, catAdmin(), catJSON{"title": "Opening", "is_hidden": true})
		Expect(r.Status).To(Equal(http.StatusOK))
		var got catJSON
		r.JSON(&got)
		Expect(got).To(HaveKeyWithValue("title", "Opening"))
		Expect(got).To(HaveKeyWithValue("is_hidden", true))
		Expect(got).To(HaveKeyWithValue("key", "intro"))
		Expect(client.Do("PATCH", "/v1/scenes/"+catID(other), catAdmin(), catJSON{"key": "intro"}).Status).To(Equal(http.StatusConflict))
		Expect(client.Do("PATCH", path, catAdmin(), catJSON{"key": ""}).Status).To(Equal(http.StatusBadRequest))
		Expect(client.Do("PATCH", path, catUser(), catJSON{"title": "x"}).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("PATCH", "/v1/scenes/"+uuid.NewString(), catAdmin(), catJSON{"title": "x"}).Status).To(Equal(http.StatusNotFound))

		Expect(client.Do("DELETE", path, catUser(), nil).Status).To(Equal(http.StatusForbidden))
		catNoContent("DELETE", path, nil)
		Expect(client.Do("GET", path, catAdmin(), nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("DELETE", path, catAdmin(), nil).Status).To(Equal(http.StatusNotFound))
		Expect(catSceneKeys(project)).To(Equal([]string{"outro"}))
	})

	Describe("reordering", func() {
		var a, b, c catJSON

		BeforeEach(func() {
			a, b, c = catScene(project, "a"), catScene(project, "b"), catScene(project, "c")
		})

		It("applies the whole new order", func() {
			catNoContent("POST", "/v1/scenes/"+catID(a)+"/reorder", catJSON{"ordered_ids": []string{catID(c), catID(a), catID(b)}})
			Expect(catSceneKeys(project)).To(Equal([]string{"c", "a", "b"}))
			next := catScene(project, "d")
			Expect(next).To(HaveKeyWithValue("position", 3.0))
		})

		It("refuses anything but exactly the project's scenes, changing nothing", func() {
			foreign := catScene(catEditorProject(), "x")
			for _, ids := range [][]string{
				{catID(c), catID(a)},
				{catID(c), catID(a), catID(b), catID(foreign)},
				{catID(c), catID(a), catID(foreign)},
				{catID(c), catID(a), catID(a)},
				{catID(c), catID(a), uuid.NewString()},
				{},
			} {
				r := client.Do("POST", "/v1/scenes/"+catID(a)+"/reorder", catAdmin(), catJSON{"ordered_ids": ids})
				Expect(r.Status).To(Equal(http.StatusBadRequest), "%v", ids)
				Expect(string(r.Body)).To(ContainSubstring("ordered_ids"))
			}
			Expect(catSceneKeys(project)).To(Equal([]string{"a", "b", "c"}))
			Expect(client.Do("POST", "/v1/scenes/"+catID(a)+"/reorder", catUser(), catJSON{"ordered_ids": []string{}}).Status).
				To(Equal(http.StatusForbidden))
			Expect(client.Do("POST", "/v1/scenes/"+uuid.NewString()+"/reorder", catAdmin(), catJSON{"ordered_ids": []string{catID(a)}}).Status).
				To(Equal(http.StatusNotFound))
		})
	})
})

var _ = Describe("scene elements", func() {
	var project string
	var scene catJSON

	BeforeEach(func() {
		testkit.Truncate(db)
		project = catEditorProject()
		scene = catScene(project, "intro")
	})

	It("are created, changed and deleted, contents and colors alike", func() {
		layer := catCreate("/v1/projects/"+project+"/shared-layers", catJSON{"key": "logo", "content_type": "logo", "label": "Logo"})
		shared := catCreate("/v1/projects/"+project+"/shared-colors", catJSON{"key": "brand", "color": "#112233"})
		content := catCreate("/v1/scenes/"+catID(scene)+"/contents", catJSON{"key": "title", "content_type": "text",
			"default_value": "Hello", "max_length": 40, "is_required": true})
		Expect(content).To(HaveKeyWithValue("shared_layer_id", BeNil()))
		linked := catCreate("/v1/scenes/"+catID(scene)+"/contents", catJSON{"key": "logo", "content_type": "logo",
			"shared_layer_id": catID(layer), "position": 1})
		Expect(linked).To(HaveKeyWithValue("shared_layer_id", catID(layer)))
		color := catCreate("/v1/scenes/"+catID(scene)+"/colors", catJSON{"key": "bg", "default_color": "#FFFFFF",
			"shared_color_id": catID(shared)})

		r := client.Do("PATCH", "/v1/scene-contents/"+catID(content), catAdmin(), catJSON{"default_value": "Hi"})
		Expect(r.Status).To(Equal(http.StatusOK))
		var got catJSON
		r.JSON(&got)
		Expect(got).To(HaveKeyWithValue("default_value", "Hi"))
		Expect(got).To(HaveKeyWithValue("max_length", 40.0))
		r = client.Do("PATCH", "/v1/scene-colors/"+catID(color), catAdmin(), catJSON{"default_color": "#000000", "label": "Background"})
		Expect(r.Status).To(Equal(http.StatusOK))
		r.JSON(&got)
		Expect(got).To(HaveKeyWithValue("default_color", "#000000"))
		Expect(got).To(HaveKeyWithValue("shared_color_id", catID(shared)))

		els := catGet("/v1/scenes/"+catID(scene)+"/elements", catUser())
		Expect(els["contents"]).To(HaveLen(2))
		Expect(els["contents"].([]any)[0]).To(HaveKeyWithValue("key", "title"))
		Expect(els["colors"]).To(HaveLen(1))

		catNoContent("DELETE", "/v1/scene-contents/"+catID(content), nil)
		catNoContent("DELETE", "/v1/scene-colors/"+catID(color), nil)
		els = catGet("/v1/scenes/"+catID(scene)+"/elements", catUser())
		Expect(els["contents"]).To(HaveLen(1))
		Expect(els["colors"]).To(BeEmpty())
		Expect(client.Do("DELETE", "/v1/scene-contents/"+catID(content), catAdmin(), nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("DELETE", "/v1/scene-colors/"+catID(color), catAdmin(), nil).Status).To(Equal(http.StatusNotFound))
	})

	It("refuse bad fields, taken keys, links to other projects and non-administrators", func() {
		other := catEditorProject()
		foreignLayer := catCreate("/v1/projects/"+other+"/shared-layers", catJSON{"key": "logo", "content_type": "logo"})
		foreignColor := catCreate("/v1/projects/"+other+"/shared-colors", catJSON{"key": "brand", "color": "#112233"})
		contents, colors := "/v1/scenes/"+catID(scene)+"/contents", "/v1/scenes/"+catID(scene)+"/colors"
		catCreate(contents, catJSON{"key": "title", "content_type": "text"})
		catCreate(colors, catJSON{"key": "bg", "default_color": "#FFFFFF"})
		for _, tc := range []struct {
			path   string
			body   catJSON
			status int
		}{
			{contents, catJSON{"key": "title", "content_type": "text"}, http.StatusConflict},
			{contents, catJSON{"key": "x", "content_type": "hologram"}, http.StatusBadRequest},
			{contents, catJSON{"key": "x", "content_type": "text", "shared_layer_id": catID(foreignLayer)}, http.StatusBadRequest},
			{contents, catJSON{"key": "x", "content_type": "text", "max_length": -1}, http.StatusBadRequest},
			{colors, catJSON{"key": "bg", "default_color": "#000000"}, http.StatusConflict},
			{colors, catJSON{"key": "x", "default_color": "red"}, http.StatusBadRequest},
			{colors, catJSON{"key": "x", "default_color": "#000000", "shared_color_id": catID(foreignColor)}, http.StatusBadRequest},
			{"/v1/scenes/" + uuid.NewString() + "/contents", catJSON{"key": "x", "content_type": "text"}, http.StatusNotFound},
			{"/v1/scenes/" + uuid.NewString() + "/colors", catJSON{"key": "x", "default_color": "#000000"}, http.StatusNotFound},
		} {
			r := client.Do("POST", tc.path, catAdmin(), tc.body)
			Expect(r.Status).To(Equal(tc.status), "%s %v: %s", tc.path, tc.body, r.Body)
		}
		Expect(client.Do("POST", contents, catUser(), catJSON{"key": "y", "content_type": "text"}).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("PATCH", "/v1/scene-contents/"+uuid.NewString(), catAdmin(), catJSON{"label": "x"}).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("PATCH", "/v1/scene-colors/"+uuid.NewString(), catAdmin(), catJSON{"label": "x"}).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("GET", "/v1/scenes/"+uuid.NewString()+"/elements", catUser(), nil).Status).To(Equal(http.StatusNotFound))
	})

	It("include the scene's characters and repeater items", func() {
		ctrl := uuid.NewString()
		Expect(db.Exec(`INSERT INTO character_controllers (id, project_id, key, name) VALUES (?, ?, 'hero', 'Hero')`, ctrl, project).Error).To(Succeed())
		Expect(db.Exec(`INSERT INTO scene_characters (id, scene_id, key, name, character_controller_id) VALUES (?, ?, 'hero1', 'Hero', ?)`,
			uuid.NewString(), catID(scene), ctrl).Error).To(Succeed())
		Expect(db.Exec(`INSERT INTO repeater_items (id, scene_id, key, label, min_count, max_count) VALUES (?, ?, 'row', 'Row', 1, 5)`,
			uuid.NewString(), catID(scene)).Error).To(Succeed())
		els := catGet("/v1/scenes/"+catID(scene)+"/elements", catUser())
		Expect(els["characters"].([]any)[0]).To(HaveKeyWithValue("character_controller_id", ctrl))
		Expect(els["repeaters"].([]any)[0]).To(HaveKeyWithValue("max_count", 5.0))
	})

	It("share layers and colors across a project's scenes", func() {
		catCreate("/v1/projects/"+project+"/shared-layers", catJSON{"key": "logo", "content_type": "logo", "default_value": "x.png"})
		catCreate("/v1/projects/"+project+"/shared-colors", catJSON{"key": "brand", "color": "#112233", "label": "Brand"})
		layers := catGet("/v1/projects/"+project+"/shared-layers", catUser())
		Expect(layers["data"].([]any)[0]).To(HaveKeyWithValue("default_value", "x.png"))
		colors := catGet("/v1/projects/"+project+"/shared-colors", tokens.ServiceToken("web"))
		Expect(colors["data"].([]any)[0]).To(HaveKeyWithValue("label", "Brand"))
		Expect(client.Do("POST", "/v1/projects/"+project+"/shared-layers", catAdmin(), catJSON{"key": "logo", "content_type": "logo"}).Status).
			To(Equal(http.StatusConflict))
		Expect(client.Do("POST", "/v1/projects/"+project+"/shared-colors", catAdmin(), catJSON{"key": "x", "color": "blue"}).Status).
			To(Equal(http.StatusBadRequest))
		Expect(client.Do("POST", "/v1/projects/"+project+"/shared-colors", catUser(), catJSON{"key": "x", "color": "#000000"}).Status).
			To(Equal(http.StatusForbidden))
		Expect(client.Do("GET", "/v1/projects/"+uuid.NewString()+"/shared-layers", catUser(), nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("POST", "/v1/projects/"+uuid.NewString()+"/shared-layers", catAdmin(), catJSON{"key": "x", "content_type": "text"}).Status).
			To(Equal(http.StatusNotFound))
	})
})

var _ = Describe("preset stories", func() {
	var project string
	var a, b catJSON

	BeforeEach(func() {
		testkit.Truncate(db)
		project = catEditorProject()
		a, b = catScene(project, "a"), catScene(project, "b")
	})

	It("are created with their steps in order and read back whole", func() {
		story := catCreate("/v1/projects/"+project+"/preset-stories", catJSON{"name": "Quick", "scenes": []catJSON{
			{"scene_id": catID(b), "content_values": map[string]string{"title": "Hi"}, "color_values": map[string]string{"bg": "#000000"}},
			{"scene_id": catID(a)},
			{"scene_id": catID(b)},
		}})
		Expect(story).To(HaveKeyWithValue("scene_count", 3.0))
		list := catGet("/v1/projects/"+project+"/preset-stories", catUser())
		Expect(list["data"]).To(HaveLen(1))
		full := catGet("/v1/preset-stories/"+catID(story), catUser())
		steps := full["scenes"].([]any)
		Expect(steps).To(HaveLen(3))
		Expect(steps[0]).To(HaveKeyWithValue("scene_id", catID(b)))
		Expect(steps[0]).To(HaveKeyWithValue("content_values", map[string]any{"title": "Hi"}))
		Expect(steps[1]).To(HaveKeyWithValue("scene_id", catID(a)))
		Expect(steps[1]).To(HaveKeyWithValue("color_values", map[string]any{}))
	})

	It("refuse scenes of other projects, bad values and non-administrators", func() {
		foreign := catScene(catEditorProject(), "x")
		path := "/v1/projects/" + project + "/preset-stories"
		for _, body := range []catJSON{
			{"name": "S", "scenes": []catJSON{{"scene_id": catID(a)}, {"scene_id": catID(foreign)}}},
			{"name": "S", "scenes": []catJSON{{"scene_id": catID(a), "color_values": map[string]string{"bg": "red"}}}},
			{"name": ""},
		} {
			Expect(client.Do("POST", path, catAdmin(), body).Status).To(Equal(http.StatusBadRequest), "%v", body)
		}
		Expect(client.Do("POST", path, catUser(), catJSON{"name": "S"}).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("POST", "/v1/projects/"+uuid.NewString()+"/preset-stories", catAdmin(), catJSON{"name": "S"}).Status).
			To(Equal(http.StatusNotFound))
		Expect(client.Do("GET", "/v1/preset-stories/"+uuid.NewString(), catUser(), nil).Status).To(Equal(http.StatusNotFound))
		Expect(catGet(path, catUser())["data"]).To(BeEmpty())
	})
})

var _ = Describe("a project's full editor graph", func() {
	BeforeEach(func() { testkit.Truncate(db) })

	It("holds the project, its scenes in order with their elements, and the project-wide records", func() {
		project := catEditorProject()
		s1, s2 := catScene(project, "s1"), catScene(project, "s2")
		catNoContent("POST", "/v1/scenes/"+catID(s1)+"/reorder", catJSON{"ordered_ids": []string{catID(s2), catID(s1)}})
		catCreate("/v1/scenes/"+catID(s1)+"/contents", catJSON{"key": "title", "content_type": "text"})
		catCreate("/v1/scenes/"+catID(s2)+"/contents", catJSON{"key": "title", "content_type": "text"})
		catCreate("/v1/scenes/"+catID(s2)+"/contents", catJSON{"key": "sub", "content_type": "text"})
		catCreate("/v1/scenes/"+catID(s1)+"/colors", catJSON{"key": "bg", "default_color": "#FFFFFF"})
		catCreate("/v1/projects/"+project+"/shared-layers", catJSON{"key": "logo", "content_type": "logo"})
		catCreate("/v1/projects/"+project+"/shared-colors", catJSON{"key": "brand", "color": "#112233"})
		catCreate("/v1/projects/"+project+"/preset-stories", catJSON{"name": "Story", "scenes": []catJSON{{"scene_id": catID(s1)}}})
		ctrl := uuid.NewString()
		Expect(db.Exec(`INSERT INTO character_controllers (id, project_id, key, name, options) VALUES (?, ?, 'hero', 'Hero', '{"rig":"2d"}')`,
			ctrl, project).Error).To(Succeed())
		Expect(db.Exec(`INSERT INTO character_presets (id, project_id, character_controller_id, name, "values") VALUES (?, ?, ?, 'Red', '{"shirt":"red"}')`,
			uuid.NewString(), project, ctrl).Error).To(Succeed())

		full := catGet("/v1/projects/"+project+"/full", catUser())
		Expect(full["project"]).To(HaveKeyWithValue("id", project))
		scenes := full["scenes"].([]any)
		Expect(scenes).To(HaveLen(2))
		Expect(scenes[0]).To(HaveKeyWithValue("key", "s2"))
		Expect(scenes[0]).To(HaveKeyWithValue("contents", HaveLen(2)))
		Expect(scenes[0]).To(HaveKeyWithValue("colors", BeEmpty()))
		Expect(scenes[1]).To(HaveKeyWithValue("contents", HaveLen(1)))
		Expect(scenes[1]).To(HaveKeyWithValue("colors", HaveLen(1)))
		Expect(full["shared_layers"]).To(HaveLen(1))
		Expect(full["shared_colors"]).To(HaveLen(1))
		Expect(full["character_controllers"].([]any)[0]).To(HaveKeyWithValue("options", map[string]any{"rig": "2d"}))
		Expect(full["character_presets"].([]any)[0]).To(HaveKeyWithValue("values", map[string]any{"shirt": "red"}))
		Expect(full["preset_stories"].([]any)[0]).To(HaveKeyWithValue("scene_count", 1.0))
		Expect(client.Do("GET", "/v1/projects/"+uuid.NewString()+"/full", catUser(), nil).Status).To(Equal(http.StatusNotFound))
	})

	It("answers 304 to the graph's ETag and never serves a graph stale after a write, from any replica", func() {
		project := catEditorProject()
		s1 := catScene(project, "s1")
		path := "/v1/projects/" + project + "/full"
		first := client.Do("GET", path, catUser(), nil)
		Expect(first.Status).To(Equal(http.StatusOK))
		etag := first.Header.Get("ETag")
		Expect(etag).NotTo(BeEmpty())

		same := client.Do("GET", path, catUser(), nil, "If-None-Match", etag)
		Expect(same.Status).To(Equal(http.StatusNotModified))
		Expect(same.Body).To(BeEmpty())
		Expect(same.Header.Get("ETag")).To(Equal(etag))
		Expect(client.Do("GET", path, catUser(), nil, "If-None-Match", `W/"other", `+etag).Status).To(Equal(http.StatusNotModified))

		catCreate("/v1/scenes/"+catID(s1)+"/contents", catJSON{"key": "title", "content_type": "text"})
		changed := client.Do("GET", path, catUser(), nil, "If-None-Match", etag)
		Expect(changed.Status).To(Equal(http.StatusOK), "a write through the API changes the ETag")
		var full catJSON
		changed.JSON(&full)
		Expect(full["scenes"].([]any)[0]).To(HaveKeyWithValue("contents", HaveLen(1)))

		// Another replica's write (here straight into the database) is seen at once.
		Expect(db.Exec(`UPDATE scenes SET title = 'Renamed elsewhere' WHERE id = ?`, catID(s1)).Error).To(Succeed())
		again := client.Do("GET", path, catUser(), nil, "If-None-Match", changed.Header.Get("ETag"))
		Expect(again.Status).To(Equal(http.StatusOK))
		again.JSON(&full)
		Expect(full["scenes"].([]any)[0]).To(HaveKeyWithValue("title", "Renamed elsewhere"))

		// Unpublishing the template hides the graph from users whatever they hold.
		Expect(db.Exec(`UPDATE containers SET is_published = false WHERE id = (SELECT container_id FROM projects WHERE id = ?)`, project).Error).To(Succeed())
		Expect(client.Do("GET", path, catUser(), nil, "If-None-Match", again.Header.Get("ETag")).Status).To(Equal(http.StatusNotFound))
	})
})
