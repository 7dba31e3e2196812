package app_test

import (
	"net/http"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
	events "github.com/motionstudio/platform/proto-events"
)

var _ = Describe("the metrics endpoint", func() {
	BeforeEach(func() { testkit.Truncate(db) })

	It("exposes the outbox lag, the SVG preview queue, the consumers' backlog and the database pool", func() {
		Expect(db.Exec(`INSERT INTO svg_previews (id, target_type, target_id, color_keys, image_key, image_content_type, created_at)
			VALUES (?, 'project', ?, '[]', 'k', 'image/png', now() - interval '1 hour')`,
			uuid.Must(uuid.NewV7()).String(), uuid.Must(uuid.NewV7()).String()).Error).To(Succeed())

		r := client.Do("GET", "/metrics", "", nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		m := testkit.ParseMetrics(r.Body)
		Expect(m.Value("outbox_unsent_events")).To(BeNumerically(">=", 0))
		Expect(m.Value("outbox_oldest_unsent_age_seconds")).To(BeNumerically(">=", 0))
		Expect(m.Value("job_queue_depth", "queue", "svg_previews", "state", "Generating")).To(BeEquivalentTo(1))
		Expect(m.Value("job_queue_oldest_age_seconds", "queue", "svg_previews", "state", "Generating")).To(BeNumerically(">=", 3600))
		Expect(m.Value("nats_consumer_pending_messages", "durable", events.DurableSvgPreviewWorker)).To(BeNumerically(">=", 0))
		Expect(m.Value("nats_consumer_ack_pending_messages", "durable", events.DurableSvgPreviewWorker)).To(BeNumerically(">=", 0))
		Expect(m.Value("go_sql_max_open_connections")).To(BeNumerically(">", 0))
		Expect(m.Value("go_sql_open_connections")).To(BeNumerically(">", 0))
	})
})
