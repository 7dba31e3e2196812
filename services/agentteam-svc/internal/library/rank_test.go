package library_test

import (
	"context"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/embed"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/library"
)

// itemsStore answers Items from memory; the ranking needs nothing else of a Store.
type itemsStore struct {
	library.Store
	items []library.Item
}

func (s itemsStore) Items(_ context.Context, q library.Query, keys []string) ([]library.Item, error) {
	var out []library.Item
	for _, it := range s.items {
		if it.Kind == q.Kind && slices.Contains(keys, it.Key) && (it.Shared() || it.OrganizationID == q.OrganizationID) {
			out = append(out, it)
		}
	}
	return out, nil
}

var _ = Describe("ranking an agent's skills for a task", func() {
	local := embed.NewLocal()
	skill := func(id, org, key, version string, status library.Status, text string) library.Item {
		v, err := local.Embed(context.Background(), []string{text})
		Expect(err).NotTo(HaveOccurred())
		return library.Item{ID: id, Kind: library.Skill, OrganizationID: org, Key: key, Name: key, Version: version, Status: status,
			Summary: text, Embedding: v[0]}
	}
	items := []library.Item{
		skill("1", "", "write-test-plan", "1.0", library.Published, "write a test plan with cases for acceptance criteria"),
		skill("2", "org", "write-test-plan", "2.0", library.Draft, "an unfinished draft"),
		skill("3", "", "design-rest-endpoint", "1.0", library.Published, "design an http endpoint contract with status codes and paging"),
		skill("4", "org", "design-rest-endpoint", "0.5", library.Published, "our endpoint design guide for http contracts, status codes, paging"),
		skill("5", "other", "review-migration", "1.0", library.Published, "review a database migration"),
	}
	svc := library.NewService(library.Deps{Store: itemsStore{items: items}, Embedder: local})

	It("resolves each key for the organization and puts the skill closest to the task first", func() {
		briefs, err := svc.Skills(context.Background(), "org", []string{"write-test-plan", "design-rest-endpoint", "review-migration"},
			"design the http endpoint for listing tasks with paging", 5)
		Expect(err).NotTo(HaveOccurred())
		names := make([]string, len(briefs))
		for i, b := range briefs {
			names[i] = b.Key + "@" + b.Version
		}
		Expect(names).To(Equal([]string{"design-rest-endpoint@0.5", "write-test-plan@1.0"}),
			"the own Published version wins, the Draft loses to the shared Published one, another organization's skill is not seen")
		Expect(briefs[0].Summary).To(HavePrefix("our endpoint design guide"))
		Expect(briefs[0].Score).To(BeNumerically(">", briefs[1].Score))
	})

	It("keeps at most k and the agent's order without a query", func() {
		briefs, err := svc.Skills(context.Background(), "org", []string{"write-test-plan", "design-rest-endpoint"}, "", 1)
		Expect(err).NotTo(HaveOccurred())
		Expect(briefs).To(HaveLen(1))
		Expect(briefs[0].Key).To(Equal("write-test-plan"))
	})

	It("answers nothing for no keys", func() {
		Expect(svc.Skills(context.Background(), "org", nil, "x", 3)).To(BeEmpty())
	})
})

var _ = Describe("the persona of an agent profile", func() {
	It("is the body of the version the organization resolves", func() {
		profiles := []library.Item{
			{ID: "1", Kind: library.AgentProfile, Key: "qa", Version: "1.0", Status: library.Published, Body: "shared guide"},
			{ID: "2", Kind: library.AgentProfile, OrganizationID: "org", Key: "qa", Version: "0.1", Status: library.Published, Body: "our guide"},
		}
		svc := library.NewService(library.Deps{Store: itemsStore{items: profiles}})
		persona, version, err := svc.Persona(context.Background(), "org", "qa", "")
		Expect(err).NotTo(HaveOccurred())
		Expect([]string{persona, version}).To(Equal([]string{"our guide", "0.1"}))
		persona, _, err = svc.Persona(context.Background(), "org", "qa", "1.0")
		Expect(err).NotTo(HaveOccurred())
		Expect(persona).To(Equal("shared guide"))
		_, _, err = svc.Persona(context.Background(), "org", "qa", "2.0")
		e, ok := apperr.As(err)
		Expect(ok).To(BeTrue())
		Expect(e.Kind).To(Equal(apperr.NotFound))
		Expect(e.Message).To(Equal("Agent profile not found."))
	})
})
