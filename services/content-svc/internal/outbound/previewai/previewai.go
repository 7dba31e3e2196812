// Package previewai is the HTTP adapter for the external AI service that turns an image into
// an SVG of its color zones; it implements preview.PreviewGenerator.
//
// The service is called with POST <url> and a JSON body
// {"image_base64", "content_type", "color_keys": [{"element_key", "current_color"}]} and
// answers 200 with {"svg": "<svg ...>", "detected_color_keys": ["..."]}.
package previewai

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/motionstudio/platform/pkg/telemetry"
	"github.com/motionstudio/platform/services/content-svc/internal/preview"
)

// maxAnswerBytes bounds the AI service's answer.
const maxAnswerBytes = 10 << 20

// Client calls the AI service.
type Client struct {
	url   string
	token string
	http  *http.Client
}

// New returns a Client for the service at url, sending token as a bearer token when it is
// not empty, with timeout on each call.
func New(url, token string, timeout time.Duration) *Client {
	return &Client{url: url, token: token, http: &http.Client{Timeout: timeout, Transport: telemetry.Transport(nil)}}
}

type colorKey struct {
	ElementKey   string `json:"element_key"`
	CurrentColor string `json:"current_color"`
}

type request struct {
	ImageBase64 string     `json:"image_base64"`
	ContentType string     `json:"content_type"`
	ColorKeys   []colorKey `json:"color_keys"`
}

type answer struct {
	SVG               string   `json:"svg"`
	DetectedColorKeys []string `json:"detected_color_keys"`
}

// Generate asks the service for the SVG. A 4xx answer other than 408 and 429 means the
// service refuses the input and is returned as preview.Unusable; network failures and other
// answers may be retried.
func (c *Client) Generate(ctx context.Context, in preview.Input) (preview.Output, error) {
	req := request{ImageBase64: base64.StdEncoding.EncodeToString(in.Image), ContentType: in.ContentType}
	for _, k := range in.ColorKeys {
		req.ColorKeys = append(req.ColorKeys, colorKey{ElementKey: k.ElementKey, CurrentColor: k.CurrentColor})
	}
	body, err := json.Marshal(req)
	if err != nil {
		return preview.Output{}, fmt.Errorf("previewai: encode request: %w", err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return preview.Output{}, preview.Unusable(fmt.Errorf("previewai: build request: %w", err))
	}
	hreq.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		return preview.Output{}, fmt.Errorf("previewai: call ai service: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return preview.Output{}, fmt.Errorf("previewai: read answer: %w", err)
	}
	switch {
	case resp.StatusCode == http.StatusOK:
	case resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusRequestTimeout && resp.StatusCode != http.StatusTooManyRequests:
		return preview.Output{}, preview.Unusable(fmt.Errorf("the ai service refused the image (status %d)", resp.StatusCode))
	default:
		return preview.Output{}, fmt.Errorf("previewai: ai service answered status %d", resp.StatusCode)
	}
	if len(raw) > maxAnswerBytes {
		return preview.Output{}, preview.Unusable(fmt.Errorf("the ai service's answer is larger than %d bytes", maxAnswerBytes))
	}
	var a answer
	if err := json.Unmarshal(raw, &a); err != nil || a.SVG == "" {
		return preview.Output{}, preview.Unusable(fmt.Errorf("the ai service's answer holds no svg"))
	}
	return preview.Output{SVG: []byte(a.SVG), DetectedColorKeys: a.DetectedColorKeys}, nil
}
