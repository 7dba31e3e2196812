package library

import (
	"context"
	"math"
	"slices"
)

// Brief is what a run's prompt lists of a skill: its name and summary.
type Brief struct {
	Key, Name, Version, Summary string
	// Score is the cosine similarity of the skill to the task (0 without embeddings).
	Score float64
}

// Skills resolves each of the agent's skill keys for the organization (see ResolvesBefore) and
// returns at most k of them ranked by the cosine similarity of their embedding to the query's;
// without embeddings the agent's order is kept. Keys that resolve to nothing are left out.
func (s *Service) Skills(ctx context.Context, organizationID string, keys []string, query string, k int) ([]Brief, error) {
	if len(keys) == 0 || k <= 0 {
		return nil, nil
	}
	items, err := s.d.Store.Items(ctx, Query{Kind: Skill, OrganizationID: organizationID}, keys)
	if err != nil {
		return nil, err
	}
	byKey := map[string][]Item{}
	for _, it := range items {
		byKey[it.Key] = append(byKey[it.Key], it)
	}
	var q []float32
	if query != "" {
		// Without a query vector the agent's order stands; a failing embedder never fails a run.
		q, _ = s.embed(ctx, query)
	}
	out := make([]Brief, 0, len(keys))
	for _, key := range keys {
		it, ok := Resolve(byKey[key])
		if !ok {
			continue
		}
		delete(byKey, key)
		out = append(out, Brief{Key: it.Key, Name: it.Name, Version: it.Version, Summary: it.Summary, Score: cosine(q, it.Embedding)})
	}
	slices.SortStableFunc(out, func(a, b Brief) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	return out[:min(k, len(out))], nil
}

// cosine is the cosine similarity of a and b, 0 when either is missing or their sizes differ.
func cosine(a, b []float32) float64 {
	if len(a) == 0 || len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// Persona returns the body of the agent profile the organization resolves for key (the exact
// version when one is given) and its version: the operating guide of an agent configured with
// that profile. It returns NotFound (Agent profile not found.).
func (s *Service) Persona(ctx context.Context, organizationID, key, version string) (persona, resolvedVersion string, err error) {
	it, err := s.Library(AgentProfile).Resolve(ctx, organizationID, key, version)
	return it.Body, it.Version, err
}
