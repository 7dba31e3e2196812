package openaiembed_test

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/outbound"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/embed"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/outbound/openaiembed"
)

// embeddingsServer is a local OpenAI-compatible embeddings endpoint answering vectors of
// dims dimensions, whose first component is the input's index plus one.
type embeddingsServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []map[string]any
	auth     []string
}

func newEmbeddingsServer(dims int, status int) *embeddingsServer {
	s := &embeddingsServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		Expect(json.NewDecoder(r.Body).Decode(&body)).To(Succeed())
		s.mu.Lock()
		s.requests = append(s.requests, body)
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if status != http.StatusOK {
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`{"error":{"message":"no","type":"invalid_request_error","code":"bad","param":null}}`))
			return
		}
		inputs, _ := body["input"].([]any)
		data := make([]map[string]any, len(inputs))
		for i := range inputs {
			v := make([]float64, dims)
			v[0] = float64(i + 1)
			v[1] = 1
			data[len(inputs)-1-i] = map[string]any{"object": "embedding", "index": i, "embedding": v}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{
			"object": "list", "model": body["model"], "data": data,
			"usage": map[string]any{"prompt_tokens": 1, "total_tokens": 1},
		})
	}))
	DeferCleanup(s.Close)
	return s
}

func newEmbedder(url string, allowLoopback bool) *openaiembed.Embedder {
	client := outbound.New(outbound.Options{AllowLoopback: allowLoopback}).HTTPClient()
	return openaiembed.New(openaiembed.Config{BaseURL: url, Model: "tiny-embed", APIKey: "sk-test"}, client)
}

var _ = Describe("the OpenAI-compatible embeddings adapter", func() {
	It("asks for 384 dimensions of the configured model and answers normalised vectors in input order", func(ctx SpecContext) {
		srv := newEmbeddingsServer(embed.Dimensions, http.StatusOK)
		vecs, err := newEmbedder(srv.URL, true).Embed(ctx, []string{"a", "b", "c"})
		Expect(err).NotTo(HaveOccurred())
		Expect(vecs).To(HaveLen(3))
		for i, v := range vecs {
			Expect(v).To(HaveLen(embed.Dimensions))
			want := float32(float64(i+1) / math.Sqrt(float64((i+1)*(i+1)+1)))
			Expect(v[0]).To(BeNumerically("~", want, 1e-6))
		}
		Expect(srv.requests).To(HaveLen(1))
		Expect(srv.requests[0]).To(HaveKeyWithValue("dimensions", BeNumerically("==", embed.Dimensions)))
		Expect(srv.requests[0]).To(HaveKeyWithValue("model", "tiny-embed"))
		Expect(srv.auth[0]).To(Equal("Bearer sk-test"))
	})

	It("splits many inputs into bounded requests", func(ctx SpecContext) {
		srv := newEmbeddingsServer(embed.Dimensions, http.StatusOK)
		texts := make([]string, 150)
		for i := range texts {
			texts[i] = "t"
		}
		vecs, err := newEmbedder(srv.URL, true).Embed(ctx, texts)
		Expect(err).NotTo(HaveOccurred())
		Expect(vecs).To(HaveLen(150))
		Expect(srv.requests).To(HaveLen(3))
	})

	It("refuses vectors of any other length", func(ctx SpecContext) {
		srv := newEmbeddingsServer(1536, http.StatusOK)
		_, err := newEmbedder(srv.URL, true).Embed(ctx, []string{"a"})
		Expect(apperr.KindOf(err)).To(Equal(apperr.Unavailable))
		var ae *apperr.Error
		Expect(errors.As(err, &ae)).To(BeTrue())
		Expect(ae.Code).To(Equal("embedding_dimensions"))
	})

	It("reports a failing endpoint as unavailable without retrying a 4xx", func(ctx SpecContext) {
		srv := newEmbeddingsServer(embed.Dimensions, http.StatusUnauthorized)
		_, err := newEmbedder(srv.URL, true).Embed(ctx, []string{"a"})
		Expect(apperr.KindOf(err)).To(Equal(apperr.Unavailable))
		Expect(err.Error()).NotTo(ContainSubstring("sk-test"))
		Expect(srv.requests).To(HaveLen(1))
	})

	It("refuses a loopback endpoint unless loopback is allowed", func(ctx SpecContext) {
		srv := newEmbeddingsServer(embed.Dimensions, http.StatusOK)
		_, err := newEmbedder(srv.URL, false).Embed(ctx, []string{"a"})
		Expect(errors.Is(err, outbound.ErrRefusedDestination)).To(BeTrue(), "got %v", err)
		Expect(srv.requests).To(BeEmpty())
	})

	It("names the model in its id", func() {
		Expect(newEmbedder("http://127.0.0.1:1", true).ID()).To(Equal("openai:tiny-embed"))
	})
})

var _ = Describe("choosing the embedder", func() {
	It("uses the local embedder when no base URL is configured", func() {
		Expect(openaiembed.Select(openaiembed.Config{Model: "m"}, nil).ID()).To(Equal(embed.LocalID))
	})

	It("uses the remote embedder when a base URL is configured", func() {
		Expect(openaiembed.Select(openaiembed.Config{BaseURL: "http://127.0.0.1:1", Model: "m"}, nil).ID()).To(Equal("openai:m"))
	})
})
