package natsx

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// consumerScrapeTimeout bounds the consumer-info requests of one scrape.
const consumerScrapeTimeout = 2 * time.Second

// consumerRef names a durable consumer on a stream, both without the bus prefix.
type consumerRef struct{ stream, durable string }

// consumers is the set of durables Consume was called with on a Bus.
type consumers struct {
	mu  sync.Mutex
	set map[consumerRef]struct{}
}

func (c *consumers) add(ref consumerRef) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.set == nil {
		c.set = map[consumerRef]struct{}{}
	}
	c.set[ref] = struct{}{}
}

func (c *consumers) list() []consumerRef {
	c.mu.Lock()
	defer c.mu.Unlock()
	refs := make([]consumerRef, 0, len(c.set))
	for ref := range c.set {
		refs = append(refs, ref)
	}
	return refs
}

var (
	pendingDesc = prometheus.NewDesc("nats_consumer_pending_messages",
		"Messages on the stream the durable consumer has not been delivered yet (JetStream NumPending).",
		[]string{"stream", "durable"}, nil)
	ackPendingDesc = prometheus.NewDesc("nats_consumer_ack_pending_messages",
		"Messages delivered to the durable consumer and not yet acknowledged (JetStream NumAckPending).",
		[]string{"stream", "durable"}, nil)
)

// consumerCollector reads the consumer info of a Bus's durables on each scrape.
type consumerCollector struct{ bus *Bus }

// ConsumerCollector returns a Prometheus collector of the backlog of every durable consumer
// Consume was called with on b: nats_consumer_pending_messages and
// nats_consumer_ack_pending_messages, labelled with the stream and durable names without the
// bus prefix. The consumer info is requested on each scrape, within two seconds; a durable whose
// info cannot be read (NATS down) is left out of that scrape.
func (b *Bus) ConsumerCollector() prometheus.Collector { return consumerCollector{bus: b} }

func (c consumerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- pendingDesc
	ch <- ackPendingDesc
}

func (c consumerCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), consumerScrapeTimeout)
	defer cancel()
	for _, ref := range c.bus.consumers.list() {
		cons, err := c.bus.js.Consumer(ctx, c.bus.StreamName(ref.stream), c.bus.ConsumerName(ref.durable))
		if err != nil {
			continue
		}
		info := cons.CachedInfo()
		ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(info.NumPending), ref.stream, ref.durable)
		ch <- prometheus.MustNewConstMetric(ackPendingDesc, prometheus.GaugeValue, float64(info.NumAckPending), ref.stream, ref.durable)
	}
}
