package modelclient_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/outbound"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/connection"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/outbound/modelclient"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/runner"
)

const key = "sk-modelclient-secret-1234"

func server(status int, body string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	DeferCleanup(srv.Close)
	return srv.URL + "/v1"
}

func complete(ctx context.Context, baseURL string, timeout time.Duration) (runner.Completion, error) {
	c := modelclient.New(outbound.New(outbound.Options{AllowLoopback: true, Timeout: timeout}))
	conn := connection.OpenedModel{ID: "c1", BaseURL: baseURL, Model: "m", APIKey: key}
	return c.Complete(ctx, conn, []runner.Message{{Role: runner.System, Content: "rules"}, {Role: runner.User, Content: "task"}})
}

var _ = Describe("the model client", func() {
	It("answers the first choice and the token usage", func(ctx SpecContext) {
		url := server(200, `{"id":"x","object":"chat.completion","created":1,"model":"m",
			"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"done"}}],
			"usage":{"prompt_tokens":11,"completion_tokens":2,"total_tokens":13}}`)
		c, err := complete(ctx, url, 5*time.Second)
		Expect(err).NotTo(HaveOccurred())
		Expect(c).To(Equal(runner.Completion{Text: "done", Usage: runner.Usage{PromptTokens: 11, CompletionTokens: 2}}))
	})

	DescribeTable("classifies failures so the worker retries only transient ones, naming the status and never the key or body",
		func(status int, kind apperr.Kind, code, message string) {
			_, err := complete(context.Background(), server(status, `{"error":{"message":"secret detail `+key+`"}}`), 5*time.Second)
			e, ok := apperr.As(err)
			Expect(ok).To(BeTrue(), "%v", err)
			Expect([]any{e.Kind, e.Code, e.Message}).To(Equal([]any{kind, code, message}))
			Expect(e.Message).NotTo(ContainSubstring(key))
		},
		Entry("401", 401, apperr.Unauthenticated, "model_unauthorized", "The model endpoint refused the API key (HTTP 401)."),
		Entry("403", 403, apperr.Forbidden, "model_forbidden", "The model endpoint refused the request (HTTP 403)."),
		Entry("400", 400, apperr.Invalid, "model_rejected", "The model endpoint answered HTTP 400."),
		Entry("429", 429, apperr.RateLimited, "model_rate_limited", "The model endpoint answered HTTP 429."),
		Entry("503", 503, apperr.Unavailable, "model_unavailable", "The model endpoint answered HTTP 503."),
	)

	It("calls an answer without a choice final, a slow endpoint transient, and a refused address final", func(ctx SpecContext) {
		_, err := complete(ctx, server(200, `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[]}`), 5*time.Second)
		Expect(apperr.KindOf(err)).To(Equal(apperr.Invalid))

		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(2 * time.Second):
			}
		}))
		DeferCleanup(slow.Close)
		_, err = complete(ctx, slow.URL+"/v1", 200*time.Millisecond)
		e, _ := apperr.As(err)
		Expect(e.Kind).To(Equal(apperr.Unavailable))

		c := modelclient.New(outbound.New(outbound.Options{}))
		_, err = c.Complete(ctx, connection.OpenedModel{BaseURL: slow.URL + "/v1", Model: "m", APIKey: key}, nil)
		e, _ = apperr.As(err)
		Expect(e.Code).To(Equal("model_refused_destination"))
	})
})
