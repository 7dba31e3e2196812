package memory_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/embed"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/memory"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
)

// fakeStore keeps entries in memory over a fakeSource.
type fakeStore struct {
	*fakeSource
	entries map[string]memory.Entry
}

func (f *fakeStore) Create(_ context.Context, e memory.Entry, v memory.Vector, _ audit.Entry) (int64, error) {
	f.entries[e.ID] = e
	f.add(e.TeamID, e.ID, v.Embedder, v.Values)
	return f.version[e.TeamID], nil
}

func (f *fakeStore) Entry(_ context.Context, id string) (memory.Entry, error) {
	e, ok := f.entries[id]
	if !ok {
		return e, memory.EntryNotFound()
	}
	return e, nil
}

func (f *fakeStore) Entries(context.Context, string, org.Page) ([]memory.Entry, error) {
	return nil, nil
}

func (f *fakeStore) EntriesByID(_ context.Context, ids []string) ([]memory.Entry, error) {
	var out []memory.Entry
	for _, id := range ids {
		if e, ok := f.entries[id]; ok {
			out = append(out, e)
		}
	}
	return out, nil
}

func (f *fakeStore) Delete(_ context.Context, id string, _ audit.Entry) (int64, error) {
	e := f.entries[id]
	delete(f.entries, id)
	f.remove(e.TeamID, id)
	return f.version[e.TeamID], nil
}

type noNotices struct{}

func (noNotices) Changed(context.Context, string, int64) {}

var _ = Describe("recalling team memory for a run's prompt", func() {
	It("answers the contents of the k most relevant entries of the team, best first", func(ctx SpecContext) {
		st := &fakeStore{fakeSource: newFakeSource(), entries: map[string]memory.Entry{}}
		local := embed.NewLocal()
		svc := memory.NewService(memory.Deps{
			Store: st, Embedder: local, Index: memory.NewIndex(st, limits), Notifier: noNotices{},
			NewID: func() string { return "" }, Now: time.Now,
		})
		for i, text := range []string{
			"Invoices are archived for ten years.",
			"Release notes go to the changelog before each deploy.",
			"Deploys need a rollback plan and a release note.",
			"The landing page uses the brand palette.",
		} {
			id := string(rune('a' + i))
			_, err := st.Create(ctx, memory.Entry{ID: id, TeamID: "team", Content: text}, memory.Vector{EntryID: id, Embedder: local.ID(), Values: local.Vector(text)}, audit.Entry{})
			Expect(err).NotTo(HaveOccurred())
		}
		_, err := st.Create(ctx, memory.Entry{ID: "z", TeamID: "other", Content: "release deploy rollback"},
			memory.Vector{EntryID: "z", Embedder: local.ID(), Values: local.Vector("release deploy rollback")}, audit.Entry{})
		Expect(err).NotTo(HaveOccurred())

		got, err := svc.Recall(ctx, "team", "deploy release rollback", 3)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(HaveLen(3))
		Expect(got[:2]).To(ConsistOf("Release notes go to the changelog before each deploy.", "Deploys need a rollback plan and a release note."))
		Expect(got).NotTo(ContainElement("release deploy rollback"))

		Expect(svc.Recall(ctx, "team", "  ", 3)).To(BeEmpty())
		Expect(svc.Recall(ctx, "empty team", "deploy", 3)).To(BeEmpty())
	})
})
