package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/motionstudio/platform/pkg/pgdb"
)

// seenWithin bounds how long a change is looked for in the listing.
const seenWithin = 5 * time.Second

// writes commits -rate catalog changes a second for -duration: three of four make a template
// the most used (use_count above every other), and it measures how long each takes from its
// commit to its first GET /v1/templates?sort=popular showing it, the listing index's
// freshness; every fourth takes a template out of the catalog (unpublished) or puts one back,
// each of which shifts the index's orders, and those still out at the end are put back. It
// says "writing" on standard error as it begins the changes (what it reads first takes some
// time), then prints one line named -name. At -rate 0 it writes nothing for -duration: the
// bench's parts "under writes" then run under none, an A/A run whose ratios are the
// measurement's own spread (ADR 0051).
func writes(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("writes", flag.ContinueOnError)
	dsn := fs.String("dsn", "", "the seeded bench database")
	base := fs.String("base", "", "content-svc base URL")
	token := fs.String("token", "", "bearer token")
	rate := fs.Int("rate", 20, "changes a second (0: none, an A/A run)")
	duration := fs.Duration("duration", 10*time.Second, "how long to write")
	name := fs.String("name", "listings-under-writes", "the printed line's name")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dsn == "" || *base == "" || *token == "" || *rate < 0 {
		return errors.New("-dsn, -base, -token and a -rate of 0 or more are required")
	}
	if *rate == 0 {
		fmt.Fprintln(os.Stderr, "writing")
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(*duration):
		}
		fmt.Printf("%-40s no changes (-rate 0)\n", *name)
		return nil
	}
	db, err := pgdb.Open(ctx, pgdb.Config{DSN: *dsn, MaxOpenConns: 2, MaxIdleConns: 2})
	if err != nil {
		return err
	}
	defer pgdb.Close(db)
	var ids []string
	if err := db.WithContext(ctx).Raw(`SELECT id::text FROM containers WHERE is_published AND deleted_at IS NULL
		AND id::text NOT IN (` + relatedTargets + `) ORDER BY random() LIMIT 1000`).Scan(&ids).Error; err != nil {
		return fmt.Errorf("template ids: %w", err)
	}
	var top int64
	if err := db.WithContext(ctx).Raw(`SELECT coalesce(max(use_count), 0) FROM containers`).Scan(&top).Error; err != nil {
		return fmt.Errorf("top use count: %w", err)
	}
	if len(ids) < 10 {
		return fmt.Errorf("%d templates to change, fewer than 10", len(ids))
	}
	hc := &http.Client{Timeout: 5 * time.Second}
	var (
		mu     sync.Mutex
		took   []time.Duration
		unseen int
		wg     sync.WaitGroup
	)
	fmt.Fprintln(os.Stderr, "writing")
	tick := time.NewTicker(time.Second / time.Duration(*rate))
	defer tick.Stop()
	end := time.Now().Add(*duration)
	changes, toggled := 0, len(ids)/10
	defer func() {
		// Put back what is still out, so that the next run (and line) reads the catalog seeded.
		if err := db.Exec(`UPDATE containers SET is_published = true WHERE id IN ? AND NOT is_published`,
			ids[len(ids)-toggled:]).Error; err != nil {
			fmt.Fprintf(os.Stderr, "put back the templates taken out: %v\n", err)
		}
	}()
	for i := 0; time.Now().Before(end); i++ {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		changes++
		id, uses := ids[i%(len(ids)-toggled)], top+int64(i)+1
		if i%4 == 3 {
			// The last tenth of the ids goes out and back in turn: out on the first round, in on the next.
			out := ids[len(ids)-1-(i/4)%toggled]
			if err := db.WithContext(ctx).Exec(`UPDATE containers SET is_published = NOT is_published WHERE id = ?`, out).Error; err != nil {
				return fmt.Errorf("toggle %s: %w", out, err)
			}
			continue
		}
		if err := db.WithContext(ctx).Exec(`UPDATE containers SET use_count = ? WHERE id = ?`, uses, id).Error; err != nil {
			return fmt.Errorf("change %s: %w", id, err)
		}
		committed := time.Now()
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok := waitShown(ctx, hc, *base, *token, id, uses)
			mu.Lock()
			defer mu.Unlock()
			if ok {
				took = append(took, time.Since(committed))
			} else {
				unseen++
			}
		}()
	}
	wg.Wait()
	if len(took) == 0 {
		return fmt.Errorf("none of %d changes was shown within %s", unseen, seenWithin)
	}
	slices.Sort(took)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	fmt.Printf("%-40s commit to visible p50 %8.3f ms   p99 %8.3f ms   (%d measured of %d changes at %d/s, %d not shown within %s)\n",
		*name, ms(took[len(took)/2]), ms(took[len(took)*99/100]), len(took)+unseen, changes, *rate, unseen, seenWithin)
	return nil
}

// popularCard is what waitShown reads of a card.
type popularCard struct {
	ContainerID string `json:"container_id"`
	UseCount    int64  `json:"use_count"`
}

// pollEvery is how often waitShown asks the listing again: the freshness it measures is this
// coarse, and its own requests stay a small part of the load beside the attack it runs with
// (every 2 ms with 50 cards a page, the polls of the changes in flight took a fifth of the
// service's CPU from the attack at 1,000,000 templates).
const pollEvery = 10 * time.Millisecond

// waitShown polls the first page of the popular listing until it shows template id with uses,
// for at most seenWithin, and reports whether it did. Each change makes its template the most
// used, so it comes first until later changes pass it; a page of 20 holds the changes in flight.
func waitShown(ctx context.Context, hc *http.Client, base, token, id string, uses int64) bool {
	q := url.Values{"sort": {"popular"}, "page_size": {"20"}}
	deadline := time.Now().Add(seenWithin)
	for time.Now().Before(deadline) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/templates?"+q.Encode(), nil)
		if err != nil {
			return false
		}
		req.Header.Set("Authorization", "Bearer "+token)
		var body struct {
			Data []popularCard `json:"data"`
		}
		resp, err := hc.Do(req)
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&body)
			_ = resp.Body.Close()
		}
		if err == nil && slices.ContainsFunc(body.Data, func(c popularCard) bool {
			return strings.EqualFold(c.ContainerID, id) && c.UseCount == uses
		}) {
			return true
		}
		time.Sleep(pollEvery)
	}
	return false
}
