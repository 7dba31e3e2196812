package quest_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/services/identity-svc/internal/quest"
)

var _ = Describe("a quest's round", func() {
	t := time.Date(2026, 1, 1, 23, 30, 0, 0, time.FixedZone("UTC-2", -2*3600))

	It("is the UTC day for daily quests", func() {
		Expect(quest.Period(quest.TypeDaily, t)).To(Equal("2026-01-02"))
	})

	It("is the ISO week for weekly quests, across the new year", func() {
		Expect(quest.Period(quest.TypeWeekly, t)).To(Equal("2026-W01"))
		Expect(quest.Period(quest.TypeWeekly, time.Date(2027, 1, 1, 12, 0, 0, 0, time.UTC))).To(Equal("2026-W53"))
	})

	It("is one round forever for the other types", func() {
		for _, typ := range []string{quest.TypeOneTime, quest.TypeOnboarding, quest.TypeMilestone} {
			Expect(quest.Period(typ, t)).To(BeEmpty())
		}
	})
})
