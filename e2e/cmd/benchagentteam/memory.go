package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"strings"
	"time"
)

// memoryWords are the vocabulary of the seeded memory entries and of the search queries.
var memoryWords = strings.Fields(`export render timeline scene color palette font layer mask
	keyframe easing preview upload template brand logo caption subtitle audio voice music beat
	transition fade zoom crop aspect ratio vertical square story reel thumbnail review approve
	correction client deadline budget draft final version comment feedback typography contrast
	motion blur shadow gradient texture loop intro outro title lower third chart map icon`)

// memory seeds -n memory entries on the team through POST /api/memory/entries (so each gets its
// vector from the service's embedder) and writes vegeta targets of GET /api/memory/search with
// -queries distinct queries.
func memory(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("memory", flag.ContinueOnError)
	base := fs.String("base", "http://127.0.0.1:8083", "the service's base URL")
	tokenFile := fs.String("token-file", "", "file holding a member's bearer token")
	team := fs.String("team", "", "the seeded team id")
	n := fs.Int("n", 10000, "memory entries to create")
	queries := fs.Int("queries", 200, "distinct search queries in the targets")
	concurrency := fs.Int("concurrency", 16, "clients creating entries at once")
	out := fs.String("out", "", "file the search targets are written to")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *tokenFile == "" || *team == "" || *out == "" {
		return errors.New("-token-file, -team and -out are required")
	}
	raw, err := os.ReadFile(*tokenFile)
	if err != nil {
		return fmt.Errorf("read token: %w", err)
	}
	token := strings.TrimSpace(string(raw))
	c := &apiClient{base: *base, token: token}
	phrase := func(r *rand.Rand, words int) string {
		w := make([]string, words)
		for i := range w {
			w[i] = memoryWords[r.IntN(len(memoryWords))]
		}
		return strings.Join(w, " ")
	}
	start := time.Now()
	kinds := []string{"Note", "Approval", "Correction"}
	err = parallel(*n, *concurrency, func(i int) error {
		r := rand.New(rand.NewPCG(uint64(i), 1))
		return c.post(ctx, "/api/memory/entries", map[string]any{"teamId": *team, "kind": kinds[i%len(kinds)], "content": phrase(r, 12+r.IntN(20))}, nil)
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "benchagentteam memory: %d entries in %.1fs\n", *n, time.Since(start).Seconds())
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	r := rand.New(rand.NewPCG(42, 7))
	for range *queries {
		q := url.QueryEscape(phrase(r, 2+r.IntN(4)))
		fmt.Fprintf(w, "GET %s/api/memory/search?teamId=%s&q=%s&limit=3\nAuthorization: Bearer %s\n\n", *base, *team, q, token)
	}
	return errors.Join(w.Flush(), f.Close())
}
