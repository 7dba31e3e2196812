package previewai_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/services/content-svc/internal/outbound/previewai"
	"github.com/motionstudio/platform/services/content-svc/internal/preview"
)

var _ = Describe("the AI service adapter", func() {
	var (
		status int
		answer string
		got    map[string]any
		auth   string
	)
	input := preview.Input{
		Image: []byte("\x89PNG fake"), ContentType: "image/png",
		ColorKeys: []preview.ColorKey{{ElementKey: "title", CurrentColor: "#ff0000"}},
	}

	start := func() *previewai.Client {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			auth = r.Header.Get("Authorization")
			got = nil
			_ = json.NewDecoder(r.Body).Decode(&got)
			w.WriteHeader(status)
			_, _ = w.Write([]byte(answer))
		}))
		DeferCleanup(srv.Close)
		return previewai.New(srv.URL, "secret-token", 5*time.Second)
	}

	BeforeEach(func() {
		status, answer = http.StatusOK, `{"svg": "<svg xmlns=\"http://www.w3.org/2000/svg\"/>", "detected_color_keys": ["title"]}`
	})

	It("sends the image and color keys and returns the SVG", func() {
		out, err := start().Generate(context.Background(), input)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(out.SVG)).To(HavePrefix("<svg"))
		Expect(out.DetectedColorKeys).To(Equal([]string{"title"}))
		Expect(auth).To(Equal("Bearer secret-token"))
		Expect(got).To(HaveKeyWithValue("image_base64", base64.StdEncoding.EncodeToString(input.Image)))
		Expect(got).To(HaveKeyWithValue("content_type", "image/png"))
		Expect(got["color_keys"]).To(ConsistOf(map[string]any{"element_key": "title", "current_color": "#ff0000"}))
	})

	It("calls a refusal unusable and a server failure retryable", func() {
		c := start()
		status = http.StatusUnprocessableEntity
		_, err := c.Generate(context.Background(), input)
		Expect(preview.IsUnusable(err)).To(BeTrue())

		status = http.StatusBadGateway
		_, err = c.Generate(context.Background(), input)
		Expect(err).To(HaveOccurred())
		Expect(preview.IsUnusable(err)).To(BeFalse())

		status, answer = http.StatusOK, `{"detected_color_keys": []}`
		_, err = c.Generate(context.Background(), input)
		Expect(preview.IsUnusable(err)).To(BeTrue())
	})
})
