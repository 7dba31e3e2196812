package redisx_test

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/motionstudio/platform/pkg/redisx"
	"github.com/motionstudio/platform/pkg/testkit"
)

// sameServer is the Config of the suite's Redis server and database.
func sameServer() redisx.Config {
	opts := client.Options()
	return redisx.Config{URL: fmt.Sprintf("redis://%s/%d", opts.Addr, opts.DB)}
}

var _ = Describe("tracing Redis commands", func() {
	It("gives each command and pipeline under a span a client span named for the command, without keys or values", func(ctx SpecContext) {
		c, err := redisx.Connect(ctx, sameServer())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(c.Close)
		rec := testkit.RecordSpans()
		reqCtx, parent := otel.Tracer("spec").Start(context.Background(), "request")
		key := prefix + "session:s3cret-key"
		Expect(c.Set(reqCtx, key, "s3cret-value", 0).Err()).To(Succeed())
		_, err = c.Pipelined(reqCtx, func(p redis.Pipeliner) error {
			p.Get(reqCtx, key)
			p.Del(reqCtx, key)
			return nil
		})
		Expect(err).NotTo(HaveOccurred())
		parent.End()

		byName := map[string]sdktrace.ReadOnlySpan{}
		for _, s := range rec.Ended() {
			byName[s.Name()] = s
		}
		Expect(byName).To(HaveKey("SET"))
		Expect(byName).To(HaveKey("PIPELINE"))
		set := byName["SET"]
		Expect(set.SpanKind()).To(Equal(trace.SpanKindClient))
		Expect(set.Parent().SpanID()).To(Equal(parent.SpanContext().SpanID()))
		Expect(set.Attributes()).To(ContainElements(
			attribute.String("db.system.name", "redis"),
			attribute.String("db.operation.name", "SET"),
			attribute.String("db.namespace", fmt.Sprint(client.Options().DB)),
		))
		Expect(byName["PIPELINE"].Attributes()).To(ContainElement(attribute.Int("db.operation.batch.size", 2)))
		for _, s := range rec.Ended() {
			for _, kv := range s.Attributes() {
				Expect(kv.Value.String()).NotTo(ContainSubstring("s3cret"), "%s %s", s.Name(), kv.Key)
			}
		}
	})

	It("makes no span for a command outside any trace", func(ctx SpecContext) {
		c, err := redisx.Connect(ctx, sameServer())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(c.Close)
		rec := testkit.RecordSpans()
		Expect(c.Get(context.Background(), prefix+"absent").Err()).To(MatchError(redis.Nil))
		Expect(rec.Ended()).To(BeEmpty())
	})
})
