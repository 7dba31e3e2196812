package embed

import (
	"context"
	"strings"
	"unicode"
)

// LocalID names the built-in embedder; change it whenever its output changes, so stored
// vectors of the old scheme are never compared with new ones.
const LocalID = "local-ngram-v1"

// Feature weights: whole words carry the meaning, word pairs some order, character trigrams
// tolerate inflections and typos.
const (
	wordWeight    = 1.0
	bigramWeight  = 0.5
	trigramWeight = 0.25
)

// Local is the built-in embedder used when no remote one is configured: feature hashing of
// lower-cased words, word bigrams and character trigrams into Dimensions signed buckets, then
// L2 normalisation. It is deterministic, needs no network and never fails.
type Local struct{}

// NewLocal returns the built-in embedder.
func NewLocal() Local { return Local{} }

// ID implements Embedder.
func (Local) ID() string { return LocalID }

// Embed implements Embedder; it never returns an error.
func (l Local) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[i] = l.Vector(t)
	}
	return out, nil
}

// Vector embeds one text.
func (Local) Vector(text string) []float32 {
	v := make([]float32, Dimensions)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
	for i, w := range words {
		add(v, "w:"+w, wordWeight)
		if i > 0 {
			add(v, "b:"+words[i-1]+" "+w, bigramWeight)
		}
		runes := []rune("^" + w + "$")
		for j := 0; j+3 <= len(runes); j++ {
			add(v, "c:"+string(runes[j:j+3]), trigramWeight)
		}
	}
	Normalize(v)
	return v
}

// add hashes a feature (64-bit FNV-1a) to a bucket and a sign, so collisions cancel out on
// average instead of piling up.
func add(v []float32, feature string, weight float32) {
	h := uint64(14695981039346656037)
	for i := 0; i < len(feature); i++ {
		h ^= uint64(feature[i])
		h *= 1099511628211
	}
	if h>>63 == 1 {
		weight = -weight
	}
	v[h%Dimensions] += weight
}
