package logx_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/logx"
)

var _ = Describe("the JSON logger", func() {
	It("writes one JSON record per line with the service and the context's attributes", func() {
		var buf bytes.Buffer
		log := logx.New(&buf, "identity-svc", "info")
		ctx := logx.WithAttrs(context.Background(), slog.String("request_id", "r-1"))
		ctx = logx.WithAttrs(ctx, slog.String("subject", "u-1"))
		log.With("component", "relay").InfoContext(ctx, "hello", "n", 3)

		var rec map[string]any
		Expect(json.Unmarshal(buf.Bytes(), &rec)).To(Succeed())
		Expect(rec).To(HaveKeyWithValue("msg", "hello"))
		Expect(rec).To(HaveKeyWithValue("service", "identity-svc"))
		Expect(rec).To(HaveKeyWithValue("component", "relay"))
		Expect(rec).To(HaveKeyWithValue("request_id", "r-1"))
		Expect(rec).To(HaveKeyWithValue("subject", "u-1"))
	})

	It("drops records below the configured level", func() {
		var buf bytes.Buffer
		log := logx.New(&buf, "svc", "warn")
		log.Info("quiet")
		Expect(buf.Len()).To(BeZero())
		log.Warn("loud")
		Expect(buf.String()).To(ContainSubstring("loud"))
	})
})
