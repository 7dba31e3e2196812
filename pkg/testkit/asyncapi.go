package testkit

import (
	"net/http"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
)

// EventContract is the part of a service's AsyncAPI document specs check: its id, channel
// addresses, operations with their actions, and message names.
type EventContract struct {
	AsyncAPI string `json:"asyncapi"`
	ID       string `json:"id"`
	Channels map[string]struct {
		Address string `json:"address"`
	} `json:"channels"`
	Operations map[string]struct {
		Action string `json:"action"`
	} `json:"operations"`
	Components struct {
		Messages map[string]any `json:"messages"`
	} `json:"components"`
}

// Actions maps each operation id to its action, "send" or "receive".
func (c EventContract) Actions() map[string]string {
	out := make(map[string]string, len(c.Operations))
	for id, op := range c.Operations {
		out[id] = op.Action
	}
	return out
}

// EventContract fetches the service's AsyncAPI document from GET /asyncapi.json without a
// token, expecting 200 with JSON.
func (a *API) EventContract() EventContract {
	ginkgo.GinkgoHelper()
	r := a.Do(http.MethodGet, "/asyncapi.json", "", nil)
	gomega.Expect(r.Status).To(gomega.Equal(http.StatusOK))
	gomega.Expect(r.Header.Get("Content-Type")).To(gomega.HavePrefix("application/json"))
	var doc EventContract
	r.JSON(&doc)
	return doc
}
