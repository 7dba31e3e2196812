// Package embed turns text into the 384-dimension unit vectors that team memory and the skill
// library rank by cosine similarity. It declares the Embedder contract and holds the built-in
// local embedder; adapters to remote embedding services live in sub-packages.
package embed

import (
	"context"
	"math"
)

// Dimensions is the length of every vector an Embedder returns.
const Dimensions = 384

// Embedder maps texts to vectors of Dimensions float32s, each L2-normalised (or all zeros for
// a text with nothing to embed), so a dot product is the cosine similarity.
type Embedder interface {
	// Embed returns one vector per text, in order. Errors are apperr Unavailable when a remote
	// embedder cannot be reached or answers badly.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// ID names the embedder and its model (for example "local-ngram-v1" or
	// "openai:text-embedding-3-small"); vectors of two different IDs are never compared.
	ID() string
}

// Normalize scales v to unit length in place; a zero vector stays zero.
func Normalize(v []float32) {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= inv
	}
}

// Dot is the dot product of two vectors of equal length: their cosine similarity when both
// are normalised.
func Dot(a, b []float32) float32 {
	var s float32
	b = b[:len(a)]
	for i, x := range a {
		s += x * b[i]
	}
	return s
}
