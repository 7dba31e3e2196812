// Package openaiembed is the Embedder adapter for OpenAI-compatible embeddings endpoints
// (POST {baseURL}/embeddings), spoken with the official openai-go client over the platform's
// SSRF-safe outbound HTTP client.
package openaiembed

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/embed"
)

// batchSize bounds the inputs of one request (the OpenAI API accepts up to 2048) so that one
// answer, about 384 numbers of up to 25 characters per input, stays under a few MiB.
const batchSize = 64

// Config says which endpoint and model to use.
type Config struct {
	// BaseURL is the API root, for example https://api.openai.com/v1.
	BaseURL string
	// Model is the embeddings model; it must support a 384-dimension output.
	Model string
	// APIKey is sent as a bearer token; it is never logged.
	APIKey string
}

// Embedder calls a remote embeddings endpoint. It is safe for concurrent use.
type Embedder struct {
	client openai.Client
	model  string
}

// New builds an Embedder that sends its requests through httpClient (outbound.Client's
// HTTPClient, so user-given addresses are checked).
func New(cfg Config, httpClient *http.Client) *Embedder {
	return &Embedder{
		client: openai.NewClient(
			option.WithBaseURL(cfg.BaseURL),
			option.WithAPIKey(cfg.APIKey),
			option.WithHTTPClient(httpClient),
			option.WithMaxRetries(2),
		),
		model: cfg.Model,
	}
}

// ID implements embed.Embedder: "openai:" and the model name.
func (e *Embedder) ID() string { return "openai:" + e.model }

// Embed implements embed.Embedder. It asks for embed.Dimensions dimensions and returns
// Unavailable when the endpoint fails, answers another number of vectors, or any vector of
// another length; the vectors it returns are L2-normalised.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += batchSize {
		batch := texts[start:min(start+batchSize, len(texts))]
		vecs, err := e.embedBatch(ctx, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

func (e *Embedder) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	resp, err := e.client.Embeddings.New(ctx, openai.EmbeddingNewParams{
		Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts},
		Model:          openai.EmbeddingModel(e.model),
		Dimensions:     openai.Int(embed.Dimensions),
		EncodingFormat: openai.EmbeddingNewParamsEncodingFormatFloat,
	})
	if err != nil {
		return nil, unavailable("embedding_failed", "the embeddings endpoint failed", describe(err))
	}
	if len(resp.Data) != len(texts) {
		return nil, unavailable("embedding_count", "the embeddings endpoint answered the wrong number of vectors",
			fmt.Errorf("openaiembed: %d vectors for %d inputs", len(resp.Data), len(texts)))
	}
	out := make([][]float32, len(texts))
	for _, d := range resp.Data {
		if d.Index < 0 || int(d.Index) >= len(texts) || out[d.Index] != nil {
			return nil, unavailable("embedding_index", "the embeddings endpoint answered a bad vector index",
				fmt.Errorf("openaiembed: index %d", d.Index))
		}
		if len(d.Embedding) != embed.Dimensions {
			return nil, unavailable("embedding_dimensions", "the embeddings endpoint answered vectors of the wrong length",
				fmt.Errorf("openaiembed: %d dimensions, want %d", len(d.Embedding), embed.Dimensions))
		}
		v := make([]float32, embed.Dimensions)
		for i, x := range d.Embedding {
			v[i] = float32(x)
		}
		embed.Normalize(v)
		out[d.Index] = v
	}
	return out, nil
}

// describe keeps an API error's status and message and drops the raw request and body the SDK
// error prints, which may echo inputs.
func describe(err error) error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		return fmt.Errorf("openaiembed: status %d: %s", apiErr.StatusCode, apiErr.Message)
	}
	return fmt.Errorf("openaiembed: %w", err)
}

func unavailable(code, msg string, cause error) error {
	return apperr.Wrap(cause, apperr.Unavailable, code, msg)
}

// Select returns the remote embedder when cfg names a base URL, else the built-in local one.
func Select(cfg Config, httpClient *http.Client) embed.Embedder {
	if cfg.BaseURL == "" {
		return embed.NewLocal()
	}
	return New(cfg, httpClient)
}
