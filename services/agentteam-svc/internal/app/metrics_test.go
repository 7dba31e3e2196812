package app_test

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
)

var _ = Describe("the metrics endpoint", func() {
	It("exposes the outbox lag, the agent-run queue by state and the database pool", func() {
		r := client.Do("GET", "/metrics", "", nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		m := testkit.ParseMetrics(r.Body)
		Expect(m.Value("outbox_unsent_events")).To(BeNumerically(">=", 0))
		Expect(m.Value("outbox_oldest_unsent_age_seconds")).To(BeNumerically(">=", 0))
		for _, state := range []string{"Queued", "Running"} {
			Expect(m.Value("job_queue_depth", "queue", "agent_runs", "state", state)).To(BeNumerically(">=", 0))
			Expect(m.Value("job_queue_oldest_age_seconds", "queue", "agent_runs", "state", state)).To(BeNumerically(">=", 0))
		}
		Expect(m.Value("go_sql_max_open_connections")).To(BeNumerically(">", 0))
	})
})
