package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	events "github.com/motionstudio/platform/proto-events"
)

// verifier runs the end-of-run checks and collects violations.
type verifier struct {
	dbs        map[string]*sql.DB
	violations []string
}

func (v *verifier) fail(format string, args ...any) {
	v.violations = append(v.violations, fmt.Sprintf(format, args...))
}

// failList records one violation per item, the first few in full and the rest as a count.
func (v *verifier) failList(what string, items []string) {
	if len(items) == 0 {
		return
	}
	sort.Strings(items)
	shown := items[:min(len(items), 5)]
	more := ""
	if len(items) > len(shown) {
		more = fmt.Sprintf(" (and %d more)", len(items)-len(shown))
	}
	v.fail("%s: %d: %s%s", what, len(items), strings.Join(shown, "; "), more)
}

// openDBs opens the three databases on the private Postgres.
func openDBs(port int) (map[string]*sql.DB, error) {
	dbs := map[string]*sql.DB{}
	for _, name := range databases {
		db, err := sql.Open("pgx", pgURL(port, name))
		if err != nil {
			return nil, err
		}
		db.SetMaxOpenConns(4)
		dbs[name] = db
	}
	return dbs, nil
}

// scanFunc reads the current row into its arguments.
type scanFunc func(dest ...any) error

// each runs q with args and calls row for every result row.
func each(ctx context.Context, db *sql.DB, q string, args []any, row func(scan scanFunc) error) error {
	rs, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rs.Close()
	for rs.Next() {
		if err := row(rs.Scan); err != nil {
			return err
		}
	}
	return rs.Err()
}

// count runs a count query.
func count(ctx context.Context, db *sql.DB, q string, args ...any) (int, error) {
	var n int
	err := db.QueryRowContext(ctx, q, args...).Scan(&n)
	return n, err
}

// outboxRow is one event or job wake-up a service wrote.
type outboxRow struct {
	db, id, subject, tenant string
	sent                    bool
	created                 time.Time
}

// outboxRows reads every outbox row of the three databases.
func outboxRows(ctx context.Context, dbs map[string]*sql.DB) ([]outboxRow, error) {
	var out []outboxRow
	for _, name := range databases {
		err := each(ctx, dbs[name], `SELECT id::text, subject, coalesce(data->>'tenant_id', ''), sent_at IS NOT NULL, created_at FROM outbox`,
			nil, func(scan scanFunc) error {
				r := outboxRow{db: name}
				err := scan(&r.id, &r.subject, &r.tenant, &r.sent, &r.created)
				out = append(out, r)
				return err
			})
		if err != nil {
			return nil, fmt.Errorf("%s outbox: %w", name, err)
		}
	}
	return out, nil
}

// isJob tells job wake-ups from events.
func isJob(subject string) bool { return strings.HasPrefix(subject, "jobs.") }

// streamOf is the event stream a subject is stored in.
func streamOf(subject string) string {
	for _, s := range events.Streams() {
		if strings.HasPrefix(subject, strings.TrimSuffix(s.Subjects[0], ">")) {
			return s.Name
		}
	}
	return ""
}

// pending says what the platform has not finished yet; empty means it settled.
func pending(ctx context.Context, dbs map[string]*sql.DB, log *eventLog) (string, error) {
	var parts []string
	add := func(what string, n int) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	for _, name := range databases {
		n, err := count(ctx, dbs[name], `SELECT count(*) FROM outbox WHERE sent_at IS NULL`)
		if err != nil {
			return "", err
		}
		add(name+" outbox rows unsent", n)
	}
	queries := []struct{ db, what, q string }{
		{"content", "previews generating", `SELECT count(*) FROM svg_previews WHERE status = 'Generating'`},
		{"agentteam", "agent runs active", `SELECT count(*) FROM agent_runs WHERE status IN ('Queued', 'Running')`},
		{"identity", "webhook messages pending", `SELECT count(*) FROM webhook_messages WHERE status IN ('Queued', 'Processing', 'Scheduled')`},
	}
	for _, q := range queries {
		n, err := count(ctx, dbs[q.db], q.q)
		if err != nil {
			return "", err
		}
		add(q.what, n)
	}
	rows, err := outboxRows(ctx, dbs)
	if err != nil {
		return "", err
	}
	unseen := 0
	for _, r := range rows {
		if !isJob(r.subject) && !log.has(r.id) {
			unseen++
		}
	}
	add("events not yet at the harness", unseen)
	missed, err := unhandled(ctx, dbs["identity"], rows)
	if err != nil {
		return "", err
	}
	add("events identity's own consumers have not handled", len(missed))
	return strings.Join(parts, ", "), nil
}

// streamCounts are the per-stream event counts the summary prints.
type streamCounts struct {
	sent, delivered, redelivered, storedTwice, lost int
}

// checkEvents compares every event the outboxes hold with what the harness's consumers got: each
// must arrive (lost otherwise), and none may be stored twice in its stream. Job wake-ups are
// counted per subject.
func (v *verifier) checkEvents(rows []outboxRow, seen map[string]seenEvent) (map[string]*streamCounts, map[string]int) {
	perStream := map[string]*streamCounts{}
	jobs := map[string]int{}
	written := map[string]bool{}
	var lost, twice, unsent []string
	for _, r := range rows {
		written[r.id] = true
		if !r.sent {
			unsent = append(unsent, r.db+" "+r.subject+" "+r.id)
		}
		if isJob(r.subject) {
			jobs[r.subject]++
			continue
		}
		c := perStream[streamOf(r.subject)]
		if c == nil {
			c = &streamCounts{}
			perStream[streamOf(r.subject)] = c
		}
		c.sent++
		e, ok := seen[r.id]
		if !ok {
			c.lost++
			lost = append(lost, r.subject+" "+r.id)
			continue
		}
		c.delivered++
		for _, n := range e.seqs {
			c.redelivered += n - 1
		}
		if len(e.seqs) > 1 {
			c.storedTwice += len(e.seqs) - 1
			twice = append(twice, fmt.Sprintf("%s %s at stream sequences %v", r.subject, r.id, keys(e.seqs)))
		}
	}
	var phantom []string
	for id, e := range seen {
		if !written[id] {
			phantom = append(phantom, e.subject+" "+id)
		}
	}
	v.failList("outbox rows never published", unsent)
	v.failList("events lost (written to an outbox, never delivered to the harness's consumer)", lost)
	v.failList("events stored twice in their stream (a republish de-duplication did not absorb)", twice)
	v.failList("events no outbox wrote", phantom)
	return perStream, jobs
}

func keys(m map[uint64]int) []uint64 {
	out := make([]uint64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// checkConsumers checks that identity's own consumers handled every event they act on.
func (v *verifier) checkConsumers(ctx context.Context, rows []outboxRow) error {
	missed, err := unhandled(ctx, v.dbs["identity"], rows)
	if err != nil {
		return err
	}
	v.failList("events a service consumer never handled", missed)
	return nil
}

// unhandled lists the events of rows that identity's own consumers act on and have not
// handled (no inbox row yet): the webhook fan-out every webhook-named event of a tenant, quest
// progress every registration. A message delivered to a replica that was killed before it
// acked is redelivered only after its ack wait, so the settle phase waits on this too.
func unhandled(ctx context.Context, identity *sql.DB, rows []outboxRow) ([]string, error) {
	handled := map[string]map[string]bool{events.DurableWebhookFanout: {}, events.DurableQuestProgress: {}}
	for consumer, ids := range handled {
		err := each(ctx, identity, `SELECT event_id FROM inbox WHERE consumer = $1`, []any{consumer}, func(scan scanFunc) error {
			var id string
			err := scan(&id)
			ids[id] = true
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	var missed []string
	for _, r := range rows {
		if r.db != "identity" || r.tenant == "" {
			continue
		}
		if _, ok := events.WebhookEventOf(r.subject); ok && !handled[events.DurableWebhookFanout][r.id] {
			missed = append(missed, events.DurableWebhookFanout+" "+r.subject+" "+r.id)
		}
		if r.subject == events.SubjectUserRegistered && !handled[events.DurableQuestProgress][r.id] {
			missed = append(missed, events.DurableQuestProgress+" "+r.subject+" "+r.id)
		}
	}
	return missed, nil
}

// webhookCounts are the webhook numbers the summary prints.
type webhookCounts struct {
	messages, dbAttempts, receiverAttempts, retried int
}

// checkWebhooks checks that every subscribed event written after the webhooks existed (since)
// became one message per webhook of its tenant, that each succeeded, that every attempt the receiver got is recorded, that no attempt
// went out twice (more sends than claims) and that no two attempts of a message overlapped.
func (v *verifier) checkWebhooks(ctx context.Context, rows []outboxRow, f *fixtures, rc *receiver, since time.Time) (webhookCounts, error) {
	var wc webhookCounts
	hooksOf := map[string][]string{}
	for id, h := range f.webhooks {
		hooksOf[h.tenantID] = append(hooksOf[h.tenantID], id)
	}
	subscribed := map[string]bool{events.SubjectUserRegistered: true, events.SubjectApiKeyCreated: true, events.SubjectApiKeyRevoked: true}
	type message struct {
		id, status     string
		attempt        int
		rows, answered int
	}
	messages := map[string]*message{}
	err := each(ctx, v.dbs["identity"], `SELECT m.webhook_id::text, m.event_id, m.id::text, m.status, m.attempt,
		count(d.id), count(d.response_status) FROM webhook_messages m LEFT JOIN webhook_deliveries d ON d.message_id = m.id
		GROUP BY m.id`, nil, func(scan scanFunc) error {
		var hook, event string
		m := &message{}
		err := scan(&hook, &event, &m.id, &m.status, &m.attempt, &m.rows, &m.answered)
		messages[hook+"|"+event] = m
		return err
	})
	if err != nil {
		return wc, err
	}
	calls, overlaps := rc.snapshot()
	answered := rc.answeredSnapshot()
	var missing, unfinished, neverReceived, unrecorded, phantom, twice, overlapping []string
	for _, r := range rows {
		if r.db != "identity" || !subscribed[r.subject] || r.created.Before(since) {
			continue
		}
		for _, hook := range hooksOf[r.tenant] {
			m := messages[hook+"|"+r.id]
			if m == nil {
				missing = append(missing, r.subject+" "+r.id+" to webhook "+hook)
				continue
			}
			wc.messages++
			wc.dbAttempts += m.rows
			key := f.webhooks[hook].path + "|" + r.id
			got := calls[key]
			wc.receiverAttempts += got
			if got > 1 {
				wc.retried++
			}
			desc := fmt.Sprintf("message %s (%s, status %s, claimed %d times, %d attempts recorded, %d answered; receiver got %d)",
				m.id, r.subject, m.status, m.attempt, m.rows, m.answered, got)
			switch {
			case m.status != "Succeeded":
				unfinished = append(unfinished, desc)
			case answered[key] == 0:
				neverReceived = append(neverReceived, desc)
			}
			if got > m.rows {
				unrecorded = append(unrecorded, desc)
			}
			if m.answered > got {
				phantom = append(phantom, desc)
			}
			if got > m.attempt {
				twice = append(twice, desc)
			}
			if overlaps[key] > 0 {
				overlapping = append(overlapping, desc)
			}
		}
	}
	v.failList("subscribed events without a webhook message", missing)
	v.failList("webhook messages not Succeeded", unfinished)
	v.failList("webhook messages Succeeded that the receiver never answered", neverReceived)
	v.failList("webhook attempts the receiver got that are not recorded", unrecorded)
	v.failList("recorded webhook answers the receiver never gave", phantom)
	v.failList("webhook attempts sent twice (more sends than claims)", twice)
	v.failList("webhook messages sent by two workers at once", overlapping)
	return wc, nil
}

// jobCounts are the preview and run numbers the summary prints.
type jobCounts struct {
	previews, previewsReady, previewsFailed, aiCalls         int
	runs, runsCompleted, runsFailed, modelCalls, multiClaims int
	failedReasons                                            map[string]int
}

// checkJobs checks that every preview and run the load queued exists and ended, that each
// ended once (one generated or finished event per job), and that the stubs never saw two
// workers on one job at once.
func (v *verifier) checkJobs(ctx context.Context, l *load, seen map[string]seenEvent, ai, model *tracker) (jobCounts, error) {
	jc := jobCounts{failedReasons: map[string]int{}}
	endEvents := map[string]int{}
	for _, e := range seen {
		switch e.subject {
		case events.SubjectSvgPreviewGenerated, events.SubjectRunCompleted, events.SubjectRunFailed:
			endEvents[e.job]++
		}
	}
	type job struct{ status, reason string }
	read := func(db, q string) (map[string]job, error) {
		out := map[string]job{}
		err := each(ctx, v.dbs[db], q, nil, func(scan scanFunc) error {
			var id string
			var j job
			var attempts int
			err := scan(&id, &j.status, &j.reason, &attempts)
			if attempts > 1 {
				jc.multiClaims++
			}
			out[id] = j
			return err
		})
		return out, err
	}
	previews, err := read("content", `SELECT id::text, status, failure_reason, attempts FROM svg_previews`)
	if err != nil {
		return jc, err
	}
	runs, err := read("agentteam", `SELECT id::text, status, error_code, attempts FROM agent_runs`)
	if err != nil {
		return jc, err
	}
	_, steps := l.stepsSnapshot()
	var lost, unfinished, ends, extra []string
	checkKind := func(kind string, rows map[string]job, known []string, final map[string]bool, step string) {
		for _, id := range known {
			if _, ok := rows[id]; !ok {
				lost = append(lost, kind+" "+id)
			}
		}
		if n, unknown := len(rows)-len(known), steps[step].Unknown; n > unknown {
			extra = append(extra, fmt.Sprintf("%d %ss more than the %d accepted, with only %d unknown outcomes", n, kind, len(known), unknown))
		}
		for id, j := range rows {
			if !final[j.status] {
				unfinished = append(unfinished, kind+" "+id+" "+j.status)
				continue
			}
			if j.status == "Cancelled" {
				continue
			}
			if n := endEvents[id]; n != 1 {
				ends = append(ends, fmt.Sprintf("%s %s (%s) has %d end events", kind, id, j.status, n))
			}
			if j.status == "Failed" {
				jc.failedReasons[kind+": "+truncate(j.reason, 80)]++
			}
		}
	}
	checkKind("preview", previews, l.previews, map[string]bool{"Ready": true, "Failed": true}, "preview")
	checkKind("run", runs, l.runs, map[string]bool{"Completed": true, "Failed": true, "Cancelled": true}, "run.create")
	for _, j := range previews {
		jc.previews++
		if j.status == "Ready" {
			jc.previewsReady++
		} else if j.status == "Failed" {
			jc.previewsFailed++
		}
	}
	for _, j := range runs {
		jc.runs++
		if j.status == "Completed" {
			jc.runsCompleted++
		} else if j.status == "Failed" {
			jc.runsFailed++
		}
	}
	v.failList("accepted jobs missing from their service's database", lost)
	v.failList("jobs beyond the requests", extra)
	v.failList("jobs not in a final state", unfinished)
	v.failList("jobs that did not end exactly once (one generated/finished event each)", ends)
	for name, t := range map[string]*tracker{"SVG previews (AI stub)": ai, "agent runs (model stub)": model} {
		calls, overlaps := t.snapshot()
		var both []string
		for key, n := range overlaps {
			both = append(both, fmt.Sprintf("%s: %d overlapping of %d calls", key, n, calls[key]))
		}
		v.failList(name+" processed by two workers at once", both)
		total := 0
		for _, n := range calls {
			total += n
		}
		if t == ai {
			jc.aiCalls = total
		} else {
			jc.modelCalls = total
		}
	}
	return jc, nil
}

// checkRequests checks the other state changes against the databases: every registration
// accepted is a user, every API key created exists and the revoked ones are revoked, and no
// task title was created more often than unknown outcomes explain.
func (v *verifier) checkRequests(ctx context.Context, l *load) error {
	users, err := count(ctx, v.dbs["identity"], `SELECT count(*) FROM users WHERE email LIKE 'user-%'`)
	if err != nil {
		return err
	}
	if users != len(l.emails) {
		v.fail("registrations: %d users in the database, %d registrations accepted", users, len(l.emails))
	}
	l.mu.Lock()
	keys := make(map[string]bool, len(l.apiKeys))
	for id, revoked := range l.apiKeys {
		keys[id] = revoked
	}
	l.mu.Unlock()
	found := map[string]bool{}
	err = each(ctx, v.dbs["identity"], `SELECT id::text, revoked_at IS NOT NULL FROM api_keys WHERE name LIKE 'key-%'`, nil, func(scan scanFunc) error {
		var id string
		var revoked bool
		err := scan(&id, &revoked)
		found[id] = revoked
		return err
	})
	if err != nil {
		return err
	}
	var bad []string
	for id, revoked := range keys {
		r, ok := found[id]
		switch {
		case !ok:
			bad = append(bad, id+" missing")
		case revoked && !r:
			bad = append(bad, id+" not revoked")
		}
	}
	v.failList("API keys", bad)
	_, steps := l.stepsSnapshot()
	if extra := len(found) - len(keys); extra > steps["api_key.create"].Unknown {
		v.fail("API keys: %d more than created, with only %d unknown outcomes", extra, steps["api_key.create"].Unknown)
	}
	dup, err := count(ctx, v.dbs["agentteam"], `SELECT coalesce(sum(n - 1), 0) FROM (SELECT count(*) AS n FROM work_items
		WHERE title LIKE 'fault-task-%' GROUP BY title) t`)
	if err != nil {
		return err
	}
	if dup > steps["task.create"].Unknown {
		v.fail("tasks: %d titles created twice, with only %d unknown outcomes", dup, steps["task.create"].Unknown)
	}
	return nil
}

// checkOnce checks that migrations and seeds ran once although two replicas started together
// on each empty database: one goose row per migration file, and the seeded rows once each.
func (v *verifier) checkOnce(ctx context.Context, repo string) error {
	sources := map[string]map[string]string{
		"identity":  {"outbox": "pkg/outbox/migrations", "identity": "services/identity-svc/internal/store/migrations"},
		"content":   {"outbox": "pkg/outbox/migrations", "content": "services/content-svc/internal/store/migrations"},
		"agentteam": {"outbox": "pkg/outbox/migrations", "agentteam": "services/agentteam-svc/internal/store/migrations"},
	}
	for db, srcs := range sources {
		for src, dir := range srcs {
			files, _ := filepath.Glob(filepath.Join(repo, dir, "*.sql"))
			table := "goose_" + src + "_version"
			applied, err := count(ctx, v.dbs[db], `SELECT count(*) FROM `+table+` WHERE version_id > 0`)
			if err != nil {
				return fmt.Errorf("%s %s: %w", db, table, err)
			}
			distinct, err := count(ctx, v.dbs[db], `SELECT count(DISTINCT version_id) FROM `+table+` WHERE version_id > 0`)
			if err != nil {
				return err
			}
			if applied != len(files) || distinct != applied {
				v.fail("migrations %s/%s: %d rows for %d versions, %d files", db, table, applied, distinct, len(files))
			}
		}
	}
	skills, _ := filepath.Glob(filepath.Join(repo, "services/agentteam-svc/starter-skills/*/SKILL.md"))
	profiles, _ := filepath.Glob(filepath.Join(repo, "services/agentteam-svc/internal/library/profiles/*.md"))
	seeds := []struct {
		db, what, q string
		want        int
	}{
		{"identity", "avatar library", `SELECT count(*) FROM avatar_library`, 4},
		{"content", "catalog version row", `SELECT count(*) FROM catalog_version`, 1},
		{"agentteam", "shared skills and agent profiles", `SELECT count(*) FROM library_items WHERE organization_id IS NULL`, len(skills) + len(profiles)},
	}
	for _, s := range seeds {
		n, err := count(ctx, v.dbs[s.db], s.q)
		if err != nil {
			return err
		}
		if n != s.want {
			v.fail("seed %s: %d rows, want %d", s.what, n, s.want)
		}
	}
	return nil
}

// repoRoot is the repository the run builds from: the working directory, which the Makefile
// sets.
func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(wd, "go.work")); err != nil {
		return "", fmt.Errorf("run faultrun from the repository root (no go.work in %s)", wd)
	}
	return wd, nil
}
