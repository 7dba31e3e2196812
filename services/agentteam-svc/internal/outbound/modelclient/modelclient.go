// Package modelclient calls OpenAI-compatible chat-completions endpoints with the official
// openai-go client over pkg/outbound's SSRF-safe HTTP client, once per call (the worker owns
// retries and fallback). The client is built per call from the connection alone: no OPENAI_*
// environment variable of the service reaches a user's endpoint. Failures are apperr errors
// whose kind tells the worker whether to retry: Unavailable (5xx, timeouts, connection errors)
// and RateLimited (429) are transient; Unauthenticated (401), Forbidden (403) and Invalid
// (other 4xx, redirects, refused addresses) are not. Messages name the status, never the key or the body.
package modelclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/outbound"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/connection"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/runner"
)

// Client implements runner.Model.
type Client struct{ http *http.Client }

// New returns a Client sending through out.
func New(out *outbound.Client) *Client { return &Client{http: out.HTTPClient()} }

// Complete sends the messages to the connection's model and returns the first choice's text
// and the token usage.
func (c *Client) Complete(ctx context.Context, conn connection.OpenedModel, messages []runner.Message) (runner.Completion, error) {
	chat := openai.NewChatCompletionService(
		option.WithHTTPClient(c.http),
		option.WithBaseURL(conn.BaseURL),
		option.WithAPIKey(conn.APIKey.Reveal()),
		option.WithMaxRetries(0),
		option.WithMiddleware(refuseRedirects),
	)
	params := openai.ChatCompletionNewParams{Model: conn.Model, Messages: make([]openai.ChatCompletionMessageParamUnion, len(messages))}
	for i, m := range messages {
		if m.Role == runner.System {
			params.Messages[i] = openai.SystemMessage(m.Content)
		} else {
			params.Messages[i] = openai.UserMessage(m.Content)
		}
	}
	res, err := chat.New(ctx, params)
	if err != nil {
		return runner.Completion{}, classify(err, conn.BaseURL)
	}
	if len(res.Choices) == 0 {
		return runner.Completion{}, apperr.E(apperr.Invalid, "model_empty", "The model answered without a choice.")
	}
	return runner.Completion{
		Text:  res.Choices[0].Message.Content,
		Usage: runner.Usage{PromptTokens: int(res.Usage.PromptTokens), CompletionTokens: int(res.Usage.CompletionTokens)},
	}, nil
}

// redirected is the error of a model endpoint that answered a redirect. The outbound client
// never follows one (it could lead anywhere, a private address included), and retrying would
// only be redirected again.
type redirected struct{ status int }

func (r redirected) Error() string {
	return fmt.Sprintf("modelclient: redirect (HTTP %d) not followed", r.status)
}

// refuseRedirects turns a redirect answer into a redirected error before openai-go reads its
// body as a completion.
func refuseRedirects(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	resp, err := next(req)
	if err == nil && resp.StatusCode >= 300 && resp.StatusCode < 400 {
		_ = resp.Body.Close()
		return nil, redirected{status: resp.StatusCode}
	}
	return resp, err
}

// classify maps an openai-go or transport error to an apperr kind the worker retries on or not.
func classify(err error, baseURL string) error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		status := apiErr.StatusCode
		msg := fmt.Sprintf("The model endpoint answered HTTP %d.", status)
		switch {
		case status == http.StatusUnauthorized:
			return apperr.Wrap(err, apperr.Unauthenticated, "model_unauthorized", "The model endpoint refused the API key (HTTP 401).")
		case status == http.StatusForbidden:
			return apperr.Wrap(err, apperr.Forbidden, "model_forbidden", "The model endpoint refused the request (HTTP 403).")
		case status == http.StatusTooManyRequests:
			return apperr.Wrap(err, apperr.RateLimited, "model_rate_limited", msg)
		case status == http.StatusRequestTimeout || status >= 500:
			return apperr.Wrap(err, apperr.Unavailable, "model_unavailable", msg)
		default:
			return apperr.Wrap(err, apperr.Invalid, "model_rejected", msg)
		}
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	var redirect redirected
	if errors.As(err, &redirect) {
		return apperr.Wrap(err, apperr.Invalid, "model_redirected",
			fmt.Sprintf("The model endpoint answered a redirect (HTTP %d), which is not followed.", redirect.status))
	}
	u, _ := url.Parse(baseURL)
	if u == nil {
		u = &url.URL{}
	}
	out := outbound.Classify(err, u)
	if apperr.Is(out, apperr.Invalid) {
		return apperr.Wrap(err, apperr.Invalid, "model_refused_destination", "The model endpoint's address is not allowed.")
	}
	if errors.Is(err, outbound.ErrBodyTooLarge) {
		return apperr.Wrap(err, apperr.Invalid, "model_too_large", "The model's answer is larger than the limit.")
	}
	if ae, ok := apperr.As(out); ok && ae.Code == "destination_timeout" {
		return apperr.Wrap(err, apperr.Unavailable, "model_timeout", "The model endpoint did not answer in time.")
	}
	return apperr.Wrap(err, apperr.Unavailable, "model_unreachable", "The model endpoint could not be reached.")
}
