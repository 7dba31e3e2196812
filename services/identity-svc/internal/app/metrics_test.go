package app_test

import (
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
	events "github.com/motionstudio/platform/proto-events"
)

// metricValue scrapes the service and answers the sample of name with the given labels.
func metricValue(name string, labels ...string) func() (float64, error) {
	return func() (float64, error) {
		r := client.Do("GET", "/metrics", "", nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		return testkit.ParseMetrics(r.Body).Value(name, labels...)
	}
}

var _ = Describe("the metrics endpoint", func() {
	It("exposes the outbox lag, the webhook queue, the consumers' backlog and the database pool", func() {
		for _, state := range []string{"Queued", "Processing", "Scheduled"} {
			Expect(metricValue("job_queue_depth", "queue", "webhook_messages", "state", state)()).To(BeNumerically(">=", 0))
			Expect(metricValue("job_queue_oldest_age_seconds", "queue", "webhook_messages", "state", state)()).To(BeNumerically(">=", 0))
		}
		for _, state := range []string{"Queued", "Processing"} {
			Expect(metricValue("job_queue_depth", "queue", "password_reset_jobs", "state", state)()).To(BeNumerically(">=", 0))
			Expect(metricValue("job_queue_oldest_age_seconds", "queue", "password_reset_jobs", "state", state)()).To(BeNumerically(">=", 0))
		}
		Expect(metricValue("outbox_unsent_events")()).To(BeNumerically(">=", 0))
		Expect(metricValue("outbox_oldest_unsent_age_seconds")()).To(BeNumerically(">=", 0))
		Expect(metricValue("nats_consumer_pending_messages", "durable", events.DurableWebhookDelivery)()).To(BeNumerically(">=", 0))
		Expect(metricValue("nats_consumer_ack_pending_messages", "durable", events.DurableWebhookFanout)()).To(BeNumerically(">=", 0))
		Expect(metricValue("go_sql_max_open_connections")()).To(BeNumerically(">", 0))
	})

	It("counts webhook deliveries by outcome", func() {
		tenant, slug := newTenant("hookmetrics")
		admin := newMember(slug, "tenant-admin")
		succeeded := metricValue("webhook_deliveries_total", "outcome", "succeeded")
		disabled := metricValue("webhook_deliveries_total", "outcome", "disabled")
		Expect(metricValue("webhook_deliveries_total", "outcome", "failed")()).To(BeNumerically(">=", 0))
		succeededBefore, err := succeeded()
		Expect(err).NotTo(HaveOccurred())
		disabledBefore, err := disabled()
		Expect(err).NotTo(HaveOccurred())

		subscribe(admin, tenant, newReceiver().srv.URL, "api_key.created")
		subscribe(admin, tenant, newReceiver(reply{status: http.StatusGone}).srv.URL, "api_key.created")
		createKey(admin, tenant)

		Eventually(succeeded).WithTimeout(15 * time.Second).Should(BeNumerically(">=", succeededBefore+1))
		Eventually(disabled).WithTimeout(15 * time.Second).Should(BeNumerically(">=", disabledBefore+1))
	})
})
