package outbox_test

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/motionstudio/platform/pkg/outbox"
)

// gauge answers the value of the unlabelled gauge name that reg gathers, or an error when it is
// not there.
func gauge(reg *prometheus.Registry, name string) func() (float64, error) {
	return func() (float64, error) {
		families, err := reg.Gather()
		if err != nil {
			return 0, err
		}
		for _, f := range families {
			if f.GetName() == name && len(f.GetMetric()) == 1 {
				return f.GetMetric()[0].GetGauge().GetValue(), nil
			}
		}
		return 0, fmt.Errorf("no %s gathered", name)
	}
}

var _ = Describe("the outbox lag metrics", func() {
	It("count the unsent events and the age of the oldest, back to zero once the relay has published them", func() {
		ctx := context.Background()
		_, subject := newStream(bus)
		writer := outbox.NewWriter("content-svc")
		reg := prometheus.NewPedanticRegistry()
		Expect(reg.Register(outbox.NewLagCollector(db))).To(Succeed())
		unsentEvents := gauge(reg, "outbox_unsent_events")
		oldestAge := gauge(reg, "outbox_oldest_unsent_age_seconds")

		Expect(unsentEvents()).To(BeZero())
		Expect(oldestAge()).To(BeZero())

		for _, id := range []string{"p1", "p2"} {
			_, err := createProject(ctx, writer, subject, id, nil)
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(db.Exec(`UPDATE outbox SET created_at = now() - interval '90 seconds' WHERE id IN
			(SELECT id FROM outbox ORDER BY created_at LIMIT 1)`).Error).To(Succeed())
		Expect(unsentEvents()).To(BeEquivalentTo(2))
		Expect(oldestAge()).To(BeNumerically("~", 90, 5))

		Expect(outbox.NewRelay(db, bus, log, outbox.RelayConfig{}).Flush(ctx)).To(Equal(2))
		Expect(unsentEvents()).To(BeZero())
		Expect(oldestAge()).To(BeZero())
	})
})
