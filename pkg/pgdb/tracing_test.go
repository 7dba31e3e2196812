package pgdb_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/testkit"
)

var _ = Describe("tracing SQL statements", Ordered, func() {
	var db *gorm.DB
	BeforeAll(func() { db, _ = testkit.NewDatabase("pgdb_traces", widgets) })

	It("gives a statement under a span a client span with the statement's text but not its values", func() {
		rec := testkit.RecordSpans()
		ctx, parent := otel.Tracer("spec").Start(context.Background(), "request")
		Expect(db.WithContext(ctx).Exec("INSERT INTO widgets (id, name, size) VALUES (?, ?, ?)", 7, "s3cret-value", 3).Error).To(Succeed())
		parent.End()

		var insert sdktrace.ReadOnlySpan
		for _, s := range rec.Ended() {
			if s.Name() == "INSERT" && s.Parent().SpanID() == parent.SpanContext().SpanID() {
				insert = s
			}
			for _, kv := range s.Attributes() {
				Expect(kv.Value.String()).NotTo(ContainSubstring("s3cret-value"), "%s %s", s.Name(), kv.Key)
			}
		}
		Expect(insert).NotTo(BeNil(), "a span of the statement under the caller's span")
		Expect(insert.SpanKind()).To(Equal(trace.SpanKindClient))
		Expect(insert.Attributes()).To(ContainElements(
			attribute.String("db.system.name", "postgresql"),
			attribute.String("db.operation.name", "INSERT"),
			attribute.String("db.query.text", "INSERT INTO widgets (id, name, size) VALUES ($1, $2, $3)"),
		))
	})

	It("makes no span for a statement outside any trace, such as a background poll", func() {
		rec := testkit.RecordSpans()
		Expect(db.WithContext(context.Background()).Exec("SELECT 1").Error).To(Succeed())
		Expect(rec.Ended()).To(BeEmpty())
	})
})
