package app_test

import (
	"bytes"
	"mime/multipart"
	"net/http"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
)

// catPatch patches path as an administrator and answers the changed record.
func catPatch(path string, body any) catJSON {
	GinkgoHelper()
	r := client.Do("PATCH", path, catAdmin(), body)
	Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
	var out catJSON
	r.JSON(&out)
	return out
}

var _ = Describe("element links to shared layers and colors", func() {
	var project, scene string

	BeforeEach(func() {
		testkit.Truncate(db)
		project = catEditorProject()
		scene = catID(catScene(project, "intro"))
	})

	It("are kept by a PATCH without the field and removed by an explicit null", func() {
		layer := catID(catCreate("/v1/projects/"+project+"/shared-layers", catJSON{"key": "logo", "content_type": "logo"}))
		content := catID(catCreate("/v1/scenes/"+scene+"/contents", catJSON{"key": "logo", "content_type": "logo",
			"shared_layer_id": layer}))

		kept := catPatch("/v1/scene-contents/"+content, catJSON{"label": "Logo"})
		Expect(kept).To(HaveKeyWithValue("shared_layer_id", layer))
		Expect(kept).To(HaveKeyWithValue("label", "Logo"))

		unlinked := catPatch("/v1/scene-contents/"+content, catJSON{"shared_layer_id": nil})
		Expect(unlinked).To(HaveKeyWithValue("shared_layer_id", BeNil()))
		Expect(unlinked).To(HaveKeyWithValue("label", "Logo"))
		els := catGet("/v1/scenes/"+scene+"/elements", catUser())
		Expect(els["contents"].([]any)[0]).To(HaveKeyWithValue("shared_layer_id", BeNil()))

		relinked := catPatch("/v1/scene-contents/"+content, catJSON{"shared_layer_id": layer})
		Expect(relinked).To(HaveKeyWithValue("shared_layer_id", layer))
	})

	It("of color elements are kept when absent and removed by null", func() {
		shared := catID(catCreate("/v1/projects/"+project+"/shared-colors", catJSON{"key": "brand", "color": "#112233"}))
		color := catID(catCreate("/v1/scenes/"+scene+"/colors", catJSON{"key": "bg", "default_color": "#FFFFFF",
			"shared_color_id": shared}))

		kept := catPatch("/v1/scene-colors/"+color, catJSON{"default_color": "#000000"})
		Expect(kept).To(HaveKeyWithValue("shared_color_id", shared))

		unlinked := catPatch("/v1/scene-colors/"+color, catJSON{"shared_color_id": nil})
		Expect(unlinked).To(HaveKeyWithValue("shared_color_id", BeNil()))
		Expect(unlinked).To(HaveKeyWithValue("default_color", "#000000"))
		full := catGet("/v1/scenes/"+scene, catUser())
		Expect(full["colors"].([]any)[0]).To(HaveKeyWithValue("shared_color_id", BeNil()))
	})
})

// orderedForm builds a multipart body from name/value pairs in order (names may repeat) and
// an image part.
func orderedForm(pairs [][2]string, image []byte) ([]byte, string) {
	GinkgoHelper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, p := range pairs {
		Expect(w.WriteField(p[0], p[1])).To(Succeed())
	}
	part, err := w.CreateFormFile("image", "drop.png")
	Expect(err).NotTo(HaveOccurred())
	_, err = part.Write(image)
	Expect(err).NotTo(HaveOccurred())
	Expect(w.Close()).To(Succeed())
	return buf.Bytes(), w.FormDataContentType()
}

var _ = Describe("SVG preview color keys in a multipart form", func() {
	var sceneID string
	var png []byte

	BeforeEach(func() {
		testkit.Truncate(db)
		sceneID = seedScene()
		png = quadrants(quadrantColors, encodePNG)
	})

	// accepted posts the form and answers the recorded preview's color keys.
	accepted := func(pairs [][2]string) []any {
		GinkgoHelper()
		body, ct := orderedForm(pairs, png)
		r := client.Do("POST", "/v1/svg-previews/generate", userToken(), body, "Content-Type", ct)
		Expect(r.Status).To(Equal(http.StatusAccepted), string(r.Body))
		var a map[string]string
		r.JSON(&a)
		Expect(a).To(HaveKeyWithValue("status", "Generating"))
		var got map[string]any
		client.Do("GET", "/v1/svg-previews/"+a["svg_preview_id"], userToken(), nil).JSON(&got)
		return got["color_keys"].([]any)
	}
	target := [][2]string{{"target_type", "scene"}, {"target_id", ""}}
	withTarget := func(more ...[2]string) [][2]string {
		t := append([][2]string{}, target...)
		t[1][1] = sceneID
		return append(t, more...)
	}
	key := func(k, c string) map[string]any { return map[string]any{"element_key": k, "current_color": c} }

	It("are read from repeated fields holding one JSON object each", func() {
		keys := accepted(withTarget(
			[2]string{"color_keys", `{"element_key":"background","current_color":"#ffffff"}`},
			[2]string{"color_keys", `{"element_key":"title","current_color":"#ff0000"}`}))
		Expect(keys).To(Equal([]any{key("background", "#ffffff"), key("title", "#ff0000")}))
	})

	It("are read from indexed fields", func() {
		keys := accepted(withTarget(
			[2]string{"color_keys[1][element_key]", "title"}, [2]string{"color_keys[1][current_color]", "#f00"},
			[2]string{"color_keys[0][element_key]", "background"}, [2]string{"color_keys[0][current_color]", "#fff"}))
		Expect(keys).To(Equal([]any{key("background", "#fff"), key("title", "#f00")}))
	})

	It("default to the scene's color elements when none are given", func() {
		Expect(db.Exec(`INSERT INTO scene_colors (id, scene_id, key, default_color, position) VALUES (?, ?, 'sky', '#0000FF', 1), (?, ?, 'sun', '#FFFF00', 0)`,
			uuid.NewString(), sceneID, uuid.NewString(), sceneID).Error).To(Succeed())
		Expect(accepted(withTarget())).To(Equal([]any{key("sun", "#FFFF00"), key("sky", "#0000FF")}))
	})

	It("default to a project's color elements across its scenes, one per key in scene order", func() {
		var projectID string
		Expect(db.Raw(`SELECT project_id FROM scenes WHERE id = ?`, sceneID).Scan(&projectID).Error).To(Succeed())
		second := uuid.NewString()
		Expect(db.Exec(`INSERT INTO scenes (id, project_id, key, position) VALUES (?, ?, 'outro', 1)`, second, projectID).Error).To(Succeed())
		Expect(db.Exec(`INSERT INTO scene_colors (id, scene_id, key, default_color, position) VALUES
			(?, ?, 'sky', '#0000FF', 0), (?, ?, 'sky', '#111111', 0), (?, ?, 'grass', '#00FF00', 1)`,
			uuid.NewString(), sceneID, uuid.NewString(), second, uuid.NewString(), second).Error).To(Succeed())
		keys := accepted([][2]string{{"target_type", "project"}, {"target_id", projectID}})
		Expect(keys).To(Equal([]any{key("sky", "#0000FF"), key("grass", "#00FF00")}))
	})

	It("are required when the target has no color elements, and must be JSON objects", func() {
		for _, pairs := range [][][2]string{
			withTarget(),
			withTarget([2]string{"color_keys", "title=#fff"}),
			withTarget([2]string{"color_keys", `{"element_key":"a","current_color":"red"}`}),
		} {
			body, ct := orderedForm(pairs, png)
			r := client.Do("POST", "/v1/svg-previews/generate", userToken(), body, "Content-Type", ct)
			Expect(r.Status).To(Equal(http.StatusBadRequest), "%v", pairs)
		}
	})
})

var _ = Describe("favorites of a service token", func() {
	BeforeEach(func() { testkit.Truncate(db) })

	It("are kept for the service client, apart from any user's", func() {
		t1 := catPublished(nil)
		svc, user := tokens.ServiceToken("web"), catUser()
		r := client.Do("POST", "/v1/favorites/folders", svc, catJSON{"name": "Picks"})
		Expect(r.Status).To(Equal(http.StatusCreated), string(r.Body))
		var folder catJSON
		r.JSON(&folder)
		r = client.Do("POST", "/v1/favorites/containers", svc, catJSON{"container_id": catID(t1), "folder_id": catID(folder)})
		Expect(r.Status).To(Equal(http.StatusCreated), string(r.Body))

		Expect(catGet("/v1/favorites/folders", svc)["data"]).To(HaveLen(1))
		Expect(catGet("/v1/favorites/containers", svc)["meta"]).To(HaveKeyWithValue("total", 1.0))
		Expect(catGet("/v1/favorites/folders", tokens.ServiceToken("other"))["data"]).To(BeEmpty())
		Expect(catGet("/v1/favorites/containers", user)["data"]).To(BeEmpty())

		Expect(client.Do("DELETE", "/v1/favorites/containers?container_id="+catID(t1), svc, nil).Status).To(Equal(http.StatusNoContent))
		Expect(catGet("/v1/favorites/containers", svc)["data"]).To(BeEmpty())
	})
})

var _ = Describe("categories and tags created by name only", func() {
	BeforeEach(func() { testkit.Truncate(db) })

	It("get a slug derived from the name, and a name is still required", func() {
		cat := catCreate("/v1/categories", catJSON{"name": "Wedding Invitations"})
		Expect(cat).To(HaveKeyWithValue("slug", "wedding-invitations"))
		tag := catCreate("/v1/tags", catJSON{"name": "Summer Sale 2026"})
		Expect(tag).To(HaveKeyWithValue("slug", "summer-sale-2026"))
		Expect(catCreate("/v1/tags", catJSON{"name": "Snake", "slug": "snake_case"})).To(HaveKeyWithValue("slug", "snake_case"))

		Expect(client.Do("POST", "/v1/categories", catAdmin(), catJSON{"name": "wedding invitations!"}).Status).To(Equal(http.StatusConflict))
		Expect(client.Do("POST", "/v1/categories", catAdmin(), catJSON{"slug": "no-name"}).Status).To(Equal(http.StatusBadRequest))
		Expect(client.Do("POST", "/v1/tags", catAdmin(), catJSON{"name": "***"}).Status).To(Equal(http.StatusBadRequest))
	})
})

var _ = Describe("content elements and shared layers created without a content type", func() {
	BeforeEach(func() { testkit.Truncate(db) })

	It("are text", func() {
		project := catEditorProject()
		scene := catID(catScene(project, "intro"))
		Expect(catCreate("/v1/scenes/"+scene+"/contents", catJSON{"key": "headline"})).To(HaveKeyWithValue("content_type", "text"))
		Expect(catCreate("/v1/projects/"+project+"/shared-layers", catJSON{"key": "tagline"})).To(HaveKeyWithValue("content_type", "text"))
		Expect(client.Do("POST", "/v1/scenes/"+scene+"/contents", catAdmin(), catJSON{"content_type": "text"}).Status).To(Equal(http.StatusBadRequest))
	})
})

var _ = Describe("scenes created without a key", func() {
	BeforeEach(func() { testkit.Truncate(db) })

	It("get a unique key from their id", func() {
		project := catEditorProject()
		a := catCreate("/v1/projects/"+project+"/scenes", catJSON{"title": "Intro", "scene_type": "intro"})
		b := catCreate("/v1/projects/"+project+"/scenes", catJSON{"title": "Intro"})
		Expect(a["key"]).To(MatchRegexp(`^scene-[0-9a-f]{12}$`))
		Expect(b["key"]).NotTo(Equal(a["key"]))
		Expect(a).To(HaveKeyWithValue("scene_type", "intro"))
	})
})

var _ = Describe("music tracks created without an audio URL", func() {
	BeforeEach(func() { testkit.Truncate(db) })

	It("are stored with an empty one", func() {
		r := client.Do("POST", "/v1/music", catAdmin(), catJSON{"title": "Calm", "genre": "ambient", "duration_sec": 30})
		Expect(r.Status).To(Equal(http.StatusCreated), string(r.Body))
		var t catJSON
		r.JSON(&t)
		Expect(t).To(HaveKeyWithValue("audio_url", ""))
		Expect(client.Do("POST", "/v1/music", catAdmin(), catJSON{"genre": "ambient", "duration_sec": 30}).Status).To(Equal(http.StatusBadRequest))
	})
})

var _ = Describe("spec shapes", func() {
	BeforeEach(func() { testkit.Truncate(db) })

	It("answer empty lists as [] and the spec's defaults in the catalog", func() {
		c := catPublished(nil)
		page := catGet("/v1/templates", catUser())
		Expect(page["meta"]).To(Equal(map[string]any{"page": 1.0, "page_size": 20.0, "total": 1.0, "has_more": false}))
		Expect(page["data"].([]any)[0]).To(HaveKeyWithValue("available_aspects", []any{}))
		Expect(page["data"].([]any)[0]).To(HaveKeyWithValue("container_id", catID(c)))
		detail := catGet("/v1/templates/"+c["slug"].(string), tokens.ServiceToken("web"))
		Expect(detail).To(HaveKeyWithValue("projects", []any{}))
		Expect(detail).To(HaveKeyWithValue("categories", []any{}))
		Expect(detail).To(HaveKeyWithValue("tags", []any{}))
		Expect(detail["container"]).To(HaveKeyWithValue("category_ids", []any{}))
		Expect(catGet("/v1/templates/"+catID(c)+"/projects", catUser())).To(HaveKeyWithValue("data", []any{}))
		Expect(catGet("/v1/templates/"+catID(c)+"/related", catUser())).To(HaveKeyWithValue("data", []any{}))
		Expect(catGet("/v1/music", catUser())["meta"]).To(HaveKeyWithValue("page_size", 20.0))
		Expect(catGet("/v1/blogs", catUser())).To(HaveKeyWithValue("data", []any{}))
		for _, path := range []string{"/v1/categories", "/v1/tags", "/v1/fonts", "/v1/slides", "/v1/home-events", "/v1/favorites/folders"} {
			Expect(catGet(path, catUser())).To(HaveKeyWithValue("data", []any{}), path)
		}
		Expect(catGet("/v1/project-servers", tokens.ServiceToken("render"))).To(HaveKeyWithValue("data", []any{}))
	})

	It("start containers unpublished and answer a new container with every field", func() {
		c := catContainer(catJSON{"description": "d", "is_premium": true})
		Expect(c).To(HaveKeyWithValue("is_published", false))
		Expect(c).To(HaveKeyWithValue("is_premium", true))
		Expect(c).To(HaveKeyWithValue("is_mockup", false))
		Expect(c).To(HaveKeyWithValue("rate_avg", 0.0))
		Expect(c).To(HaveKeyWithValue("use_count", 0.0))
		Expect(client.Do("POST", "/v1/containers", catAdmin(), catJSON{"slug": "only-slug", "name": "N"}).Status).To(Equal(http.StatusBadRequest))
	})

	It("answer a new scene's fields, and the project graph's keys", func() {
		project := catEditorProject()
		s := catCreate("/v1/projects/"+project+"/scenes", catJSON{"key": "intro"})
		Expect(s).To(HaveKeyWithValue("localized_title", map[string]any{}))
		full := catGet("/v1/projects/"+project+"/full", catUser())
		Expect(full).To(HaveKey("project"))
		for _, k := range []string{"scenes", "shared_colors", "shared_layers", "character_controllers", "character_presets", "preset_stories"} {
			Expect(full).To(HaveKey(k))
		}
		Expect(full["scenes"].([]any)[0]).To(HaveKeyWithValue("contents", []any{}))
		els := catGet("/v1/scenes/"+catID(s)+"/elements", catUser())
		Expect(els).To(Equal(map[string]any{"contents": []any{}, "colors": []any{}, "characters": []any{}, "repeaters": []any{}}))
	})
})

var _ = Describe("a project's render server", func() {
	BeforeEach(func() { testkit.Truncate(db) })

	It("is kept by a PATCH without the field and removed by an explicit null", func() {
		server := catCreate("/v1/project-servers", catJSON{"name": "render-1", "base_url": "https://render-1.example.com"})
		c := catPublished(nil)
		p := catProject(catID(c), 1080, 1920, catJSON{"project_server_id": catID(server)})
		Expect(p).To(HaveKeyWithValue("project_server_id", catID(server)))
		Expect(catPatch("/v1/projects/"+catID(p), catJSON{"name": "Vertical"})).To(HaveKeyWithValue("project_server_id", catID(server)))
		unlinked := catPatch("/v1/projects/"+catID(p), catJSON{"project_server_id": nil})
		Expect(unlinked).To(HaveKeyWithValue("project_server_id", BeNil()))
		Expect(unlinked).To(HaveKeyWithValue("name", "Vertical"))
		Expect(catGet("/v1/projects/"+catID(p), catAdmin())).To(HaveKeyWithValue("project_server_id", BeNil()))
	})
})

var _ = Describe("required fields of the spec's create bodies", func() {
	BeforeEach(func() { testkit.Truncate(db) })

	refusedWithout := func(path string, body catJSON, required ...string) {
		GinkgoHelper()
		for _, field := range required {
			partial := catJSON{}
			for k, v := range body {
				if k != field {
					partial[k] = v
				}
			}
			r := client.Do("POST", path, catAdmin(), partial)
			Expect(r.Status).To(Equal(http.StatusBadRequest), "without %s: %s", field, r.Body)
			Expect(string(r.Body)).To(ContainSubstring(field))
		}
		r := client.Do("POST", path, catAdmin(), body)
		Expect(r.Status).To(Equal(http.StatusCreated), string(r.Body))
	}

	It("are each refused when missing", func() {
		refusedWithout("/v1/containers", catJSON{"slug": "req-check", "name": "Req", "primary_mode": "video"},
			"slug", "name", "primary_mode")
		c := catContainer(nil)
		refusedWithout("/v1/projects", catJSON{"container_id": catID(c), "name": "P", "original_width": 1920,
			"original_height": 1080, "project_duration_sec": 12.5, "choose_mode": "scenes"},
			"container_id", "name", "original_width", "original_height", "project_duration_sec", "choose_mode")
		refusedWithout("/v1/favorites/folders", catJSON{"name": "F"}, "name")
		refusedWithout("/v1/favorites/containers", catJSON{"container_id": catID(c)}, "container_id")
		refusedWithout("/v1/comments", catJSON{"content": "Hello"}, "content")
		project := catID(catProject(catID(c), 1920, 1080, nil))
		refusedWithout("/v1/projects/"+project+"/aep/start-upload", catJSON{"filename": "big.aep", "total_size_bytes": 400_000_000},
			"filename", "total_size_bytes")
	})
})
