package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
	events "github.com/motionstudio/platform/proto-events"
)

// quadrants is a 80x60 image whose four quarters have the four colors.
func quadrants(colors [4]color.RGBA, encode func(io.Writer, image.Image) error) []byte {
	GinkgoHelper()
	img := image.NewRGBA(image.Rect(0, 0, 80, 60))
	for y := range 60 {
		for x := range 80 {
			img.Set(x, y, colors[(y/30)*2+x/40])
		}
	}
	var buf bytes.Buffer
	Expect(encode(&buf, img)).To(Succeed())
	return buf.Bytes()
}

func encodePNG(w io.Writer, img image.Image) error { return png.Encode(w, img) }
func encodeJPEG(w io.Writer, img image.Image) error {
	return jpeg.Encode(w, img, &jpeg.Options{Quality: 95})
}

var quadrantColors = [4]color.RGBA{{255, 255, 255, 255}, {255, 0, 0, 255}, {0, 200, 0, 255}, {0, 0, 255, 255}}

var quadrantKeys = []map[string]string{
	{"element_key": "background", "current_color": "#ffffff"},
	{"element_key": "title", "current_color": "#ff0000"},
	{"element_key": "ribbon", "current_color": "#00c800"},
	{"element_key": "frame", "current_color": "#00f"},
}

// seedScene inserts a project with one scene and returns the scene id.
func seedScene() string {
	GinkgoHelper()
	id := uuid.Must(uuid.NewV7()).String()
	Expect(db.Exec(`INSERT INTO scenes (id, project_id, key, title) VALUES (?, ?, 'intro', 'Intro')`, id, seedProject()).Error).To(Succeed())
	return id
}

// generatedEvents subscribes, like any outside consumer, to the generated events of this
// suite's prefix with a plain NATS connection.
func generatedEvents() chan *nats.Msg {
	return testkit.Listen(natsPrefix + events.SubjectSvgPreviewGenerated)
}

type generatedEvent struct {
	PreviewID     string   `json:"preview_id"`
	TargetType    string   `json:"target_type"`
	TargetID      string   `json:"target_id"`
	TenantID      string   `json:"tenant_id"`
	Status        string   `json:"status"`
	SvgURL        string   `json:"svg_url"`
	FailureReason string   `json:"failure_reason"`
	ColorKeys     []string `json:"color_keys"`
	GeneratedAt   string   `json:"generated_at"`
}

// waitForEvent answers the generated event of the preview id.
func waitForEvent(ch chan *nats.Msg, id string) generatedEvent {
	GinkgoHelper()
	ev, _ := waitForMessage(ch, id)
	return ev
}

// waitForMessage answers the generated event of the preview id and the message carrying it.
func waitForMessage(ch chan *nats.Msg, id string) (generatedEvent, *nats.Msg) {
	GinkgoHelper()
	msg := testkit.AwaitMessage(ch, "preview_id", id)
	Expect(msg.Header.Get("ce-type")).To(Equal(events.SubjectSvgPreviewGenerated))
	var ev generatedEvent
	Expect(json.Unmarshal(msg.Data, &ev)).To(Succeed())
	return ev, msg
}

type svgDoc struct {
	Paths []struct {
		Key  string `xml:"data-element-key,attr"`
		Fill string `xml:"fill,attr"`
		D    string `xml:"d,attr"`
	} `xml:"path"`
}

var _ = Describe("SVG previews", func() {
	var sceneID string

	BeforeEach(func() {
		testkit.Truncate(db)
		sceneID = seedScene()
	})

	generate := func(token string, fields map[string]string, image []byte) testkit.Response {
		GinkgoHelper()
		var files []formFile
		if image != nil {
			files = append(files, formFile{"image", "drop.bin", image})
		}
		body, ct := multipartBody(fields, files...)
		return client.Do("POST", "/v1/svg-previews/generate", token, body, "Content-Type", ct)
	}
	keysJSON := func(keys any) string {
		b, err := json.Marshal(keys)
		Expect(err).NotTo(HaveOccurred())
		return string(b)
	}
	sceneFields := func() map[string]string {
		return map[string]string{"target_type": "scene", "target_id": sceneID, "color_keys": keysJSON(quadrantKeys)}
	}

	It("generates one region per color key, announces it on NATS and serves it as the scene's latest", func() {
		events := generatedEvents()
		Expect(client.Do("GET", "/v1/scenes/"+sceneID+"/svg-preview", userToken(), nil).Status).To(Equal(http.StatusNotFound))

		r := generate(userToken(), sceneFields(), quadrants(quadrantColors, encodePNG))
		Expect(r.Status).To(Equal(http.StatusAccepted), string(r.Body))
		var accepted map[string]string
		r.JSON(&accepted)
		Expect(accepted).To(HaveKeyWithValue("status", "Generating"))
		id := accepted["svg_preview_id"]

		ev := waitForEvent(events, id)
		Expect(ev.Status).To(Equal("Ready"))
		Expect(ev.TargetType).To(Equal("scene"))
		Expect(ev.TargetID).To(Equal(sceneID))
		Expect(ev.ColorKeys).To(ConsistOf("background", "title", "ribbon", "frame"))
		Expect(ev.SvgURL).To(HaveSuffix("svg-previews/" + id + "/preview.svg"))
		Expect(ev.GeneratedAt).NotTo(BeEmpty())

		rc, _, err := appObjects().Get(context.Background(), "svg-previews/"+id+"/preview.svg")
		Expect(err).NotTo(HaveOccurred())
		defer rc.Close()
		var doc svgDoc
		Expect(xml.NewDecoder(rc).Decode(&doc)).To(Succeed())
		Expect(doc.Paths).To(HaveLen(len(quadrantKeys)))
		for i, p := range doc.Paths {
			Expect(p.Key).To(Equal(quadrantKeys[i]["element_key"]))
			Expect(p.Fill).To(Equal(quadrantKeys[i]["current_color"]))
			Expect(p.D).To(HavePrefix("M"))
		}

		r = client.Do("GET", "/v1/svg-previews/"+id, tokens.ServiceToken("editor"), nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		var got map[string]any
		r.JSON(&got)
		Expect(got).To(HaveKeyWithValue("status", "Ready"))
		Expect(got).To(HaveKeyWithValue("svg_url", ev.SvgURL))
		Expect(got).To(HaveKeyWithValue("failure_reason", BeNil()))
		Expect(string(download(got["svg_url"].(string)))).To(ContainSubstring("<svg"), "anyone may fetch the preview")
		Expect(download(got["image_url"].(string))).NotTo(BeEmpty(), "and its source image")
		r = client.Do("GET", "/v1/scenes/"+sceneID+"/svg-preview", userToken(), nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		r.JSON(&got)
		Expect(got).To(HaveKeyWithValue("id", id))
	})

	It("names the asking user's tenant and the payload's schema in the event's CloudEvents headers, and no tenant for a service", func() {
		events := generatedEvents()
		tenantID := uuid.NewString()
		r := generate(tokens.UserToken(uuid.NewString(), tenantID, false), sceneFields(), quadrants(quadrantColors, encodePNG))
		Expect(r.Status).To(Equal(http.StatusAccepted), string(r.Body))
		var accepted map[string]string
		r.JSON(&accepted)
		ev, msg := waitForMessage(events, accepted["svg_preview_id"])
		Expect(ev.TenantID).To(Equal(tenantID))
		Expect(msg.Header.Get("ce-tenantid")).To(Equal(tenantID))
		Expect(msg.Header.Get("ce-dataschema")).To(Equal(
			"urn:motionstudio:asyncapi:content-svc#/components/schemas/motionstudio.content.v1.SvgPreviewGenerated"))
		Expect(msg.Header).NotTo(HaveKey("ce-organizationid"))

		r = generate(tokens.ServiceToken("editor"), sceneFields(), quadrants(quadrantColors, encodePNG))
		Expect(r.Status).To(Equal(http.StatusAccepted), string(r.Body))
		r.JSON(&accepted)
		ev, msg = waitForMessage(events, accepted["svg_preview_id"])
		Expect(ev.TenantID).To(BeEmpty())
		Expect(msg.Header).NotTo(HaveKey("ce-tenantid"))
		Expect(msg.Header.Get("ce-dataschema")).To(HaveSuffix("motionstudio.content.v1.SvgPreviewGenerated"))
	})

	It("accepts JPEG images and project targets", func() {
		events := generatedEvents()
		var projectID string
		Expect(db.Raw(`SELECT project_id FROM scenes WHERE id = ?`, sceneID).Scan(&projectID).Error).To(Succeed())
		f := map[string]string{"target_type": "project", "target_id": projectID, "color_keys": keysJSON(quadrantKeys)}
		r := generate(userToken(), f, quadrants(quadrantColors, encodeJPEG))
		Expect(r.Status).To(Equal(http.StatusAccepted), string(r.Body))
		var accepted map[string]string
		r.JSON(&accepted)
		ev := waitForEvent(events, accepted["svg_preview_id"])
		Expect(ev.Status).To(Equal("Ready"))
		Expect(ev.ColorKeys).To(HaveLen(4))
	})

	It("fails with a reason, announced too, when the image cannot be decoded", func() {
		events := generatedEvents()
		webp := append([]byte("RIFF\x10\x00\x00\x00WEBPVP8 "), bytes.Repeat([]byte{1}, 64)...)
		r := generate(userToken(), sceneFields(), webp)
		Expect(r.Status).To(Equal(http.StatusAccepted), string(r.Body))
		var accepted map[string]string
		r.JSON(&accepted)
		ev := waitForEvent(events, accepted["svg_preview_id"])
		Expect(ev.Status).To(Equal("Failed"))
		Expect(ev.FailureReason).To(ContainSubstring("cannot be decoded"))
		Expect(ev.SvgURL).To(BeEmpty())
		r = client.Do("GET", "/v1/svg-previews/"+accepted["svg_preview_id"], userToken(), nil)
		var got map[string]any
		r.JSON(&got)
		Expect(got).To(HaveKeyWithValue("status", "Failed"))
		Expect(got).To(HaveKeyWithValue("svg_url", BeNil()))
	})

	It("checks the image by content and size", func() {
		r := generate(userToken(), sceneFields(), []byte("GIF89a not accepted"))
		Expect(r.Status).To(Equal(http.StatusUnsupportedMediaType))
		big := append(quadrants(quadrantColors, encodePNG), make([]byte, 11<<20)...)
		Expect(generate(userToken(), sceneFields(), big).Status).To(Equal(http.StatusRequestEntityTooLarge))
		Expect(generate(userToken(), sceneFields(), nil).Status).To(Equal(http.StatusBadRequest))
		var n int64
		Expect(db.Raw(`SELECT count(*) FROM svg_previews`).Scan(&n).Error).To(Succeed())
		Expect(n).To(BeZero())
	})

	It("refuses bad targets and color keys", func() {
		png := quadrants(quadrantColors, encodePNG)
		for _, f := range []map[string]string{
			{"target_type": "container", "target_id": sceneID, "color_keys": keysJSON(quadrantKeys)},
			{"target_type": "scene", "target_id": "nope", "color_keys": keysJSON(quadrantKeys)},
			{"target_type": "scene", "target_id": sceneID, "color_keys": "not json"},
			{"target_type": "scene", "target_id": sceneID, "color_keys": "[]"},
			{"target_type": "scene", "target_id": sceneID, "color_keys": keysJSON([]map[string]string{{"element_key": "a", "current_color": "red"}})},
			{"target_type": "scene", "target_id": sceneID, "color_keys": keysJSON([]map[string]string{
				{"element_key": "a", "current_color": "#fff"}, {"element_key": "a", "current_color": "#000"}})},
		} {
			Expect(generate(userToken(), f, png).Status).To(Equal(http.StatusBadRequest), "%v", f)
		}
		f := map[string]string{"target_type": "scene", "target_id": uuid.NewString(), "color_keys": keysJSON(quadrantKeys)}
		Expect(generate(userToken(), f, png).Status).To(Equal(http.StatusNotFound))
		f["target_type"] = "project"
		Expect(generate(userToken(), f, png).Status).To(Equal(http.StatusNotFound))
	})

	It("need a token and answer 404 for unknown previews", func() {
		Expect(generate("", sceneFields(), quadrants(quadrantColors, encodePNG)).Status).To(Equal(http.StatusUnauthorized))
		Expect(client.Do("GET", "/v1/svg-previews/"+uuid.NewString(), userToken(), nil).Status).To(Equal(http.StatusNotFound))
		Expect(client.Do("GET", "/v1/svg-previews/"+uuid.NewString(), "", nil).Status).To(Equal(http.StatusUnauthorized))
		Expect(client.Do("GET", "/v1/scenes/"+uuid.NewString()+"/svg-preview", userToken(), nil).Status).To(Equal(http.StatusNotFound))
	})
})
