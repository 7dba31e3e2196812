package natsx_test

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/motionstudio/platform/pkg/natsx"
)

// consumerGauge answers the value of the named gauge for durable in what reg gathers, or an
// error when it is not there.
func consumerGauge(reg *prometheus.Registry, name, durable string) func() (float64, error) {
	return func() (float64, error) {
		families, err := reg.Gather()
		Expect(err).NotTo(HaveOccurred())
		for _, f := range families {
			if f.GetName() != name {
				continue
			}
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "durable" && l.GetValue() == durable {
						return m.GetGauge().GetValue(), nil
					}
				}
			}
		}
		return 0, fmt.Errorf("no %s for %s", name, durable)
	}
}

var _ = Describe("the consumer backlog metrics", func() {
	It("count the messages a durable has not been delivered or has not acknowledged, until it catches up", func() {
		ctx := context.Background()
		stream, subject := newStream()
		durable := unique("d")
		reg := prometheus.NewPedanticRegistry()
		Expect(reg.Register(bus.ConsumerCollector())).To(Succeed())

		release := make(chan struct{})
		consume(natsx.ConsumerSpec{Stream: stream, Durable: durable}, func(ctx context.Context, _ natsx.Message) error {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil
		})
		for range 3 {
			ev, err := natsx.NewEvent("test-svc", "content.project.created.v1", subject, &structpb.Struct{})
			Expect(err).NotTo(HaveOccurred())
			Expect(bus.Publish(ctx, ev)).To(Succeed())
		}

		pending := consumerGauge(reg, "nats_consumer_pending_messages", durable)
		ackPending := consumerGauge(reg, "nats_consumer_ack_pending_messages", durable)
		Eventually(func() (float64, error) {
			p, err := pending()
			if err != nil {
				return 0, err
			}
			a, err := ackPending()
			return p + a, err
		}).Should(BeEquivalentTo(3))
		Expect(ackPending()).To(BeNumerically(">=", 1))

		close(release)
		Eventually(pending).Should(BeZero())
		Eventually(ackPending).Should(BeZero())
	})
})
