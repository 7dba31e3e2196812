package modelclient_test

import (
	"context"
	"encoding/json"
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
	return c.Complete(ctx, conn, []runner.Message{{Role: runner.System, Content: "rules"}, {Role: runner.User, Content: "task"}}, nil)
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

	It("offers the tools as functions, replays tool calls and results, and reads the tool calls asked for", func(ctx SpecContext) {
		var body map[string]any
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_ = json.NewDecoder(r.Body).Decode(&body)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"id":"x","object":"chat.completion","created":1,"model":"m",
				"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,
					"tool_calls":[{"id":"c9","type":"function","function":{"name":"read_page","arguments":"{\"page\":\"b\"}"}}]}}],
				"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`))
		}))
		DeferCleanup(srv.Close)
		c := modelclient.New(outbound.New(outbound.Options{AllowLoopback: true, Timeout: 5 * time.Second}))
		got, err := c.Complete(ctx, connection.OpenedModel{ID: "c1", BaseURL: srv.URL + "/v1", Model: "m", APIKey: key}, []runner.Message{
			{Role: runner.User, Content: "task"},
			{Role: runner.Assistant, ToolCalls: []runner.ToolCall{{ID: "c1", Name: "read_page", Arguments: `{"page":"a"}`}}},
			{Role: runner.ToolRole, ToolCallID: "c1", Content: "page a"},
		}, []runner.ToolSpec{{Name: "read_page", Description: "Read a page.", Parameters: []byte(`{"type":"object","properties":{"page":{"type":"string"}}}`)}})
		Expect(err).NotTo(HaveOccurred())
		Expect(got.ToolCalls).To(Equal([]runner.ToolCall{{ID: "c9", Name: "read_page", Arguments: `{"page":"b"}`}}))
		Expect(body["tools"]).To(Equal([]any{map[string]any{"type": "function", "function": map[string]any{
			"name": "read_page", "description": "Read a page.",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"page": map[string]any{"type": "string"}}},
		}}}))
		msgs := body["messages"].([]any)
		Expect(msgs[1]).To(HaveKeyWithValue("tool_calls", []any{map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "read_page", "arguments": `{"page":"a"}`}}}))
		Expect(msgs[2]).To(Equal(map[string]any{"role": "tool", "tool_call_id": "c1", "content": "page a"}))
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
		_, err = c.Complete(ctx, connection.OpenedModel{BaseURL: slow.URL + "/v1", Model: "m", APIKey: key}, nil, nil)
		e, _ = apperr.As(err)
		Expect(e.Code).To(Equal("model_refused_destination"))
	})
})
