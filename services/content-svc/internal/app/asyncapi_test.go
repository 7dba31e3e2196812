package app_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("the event contract", func() {
	It("is served without a token at /asyncapi.json, with the subjects content-svc publishes and consumes", func() {
		doc := client.EventContract()
		Expect(doc.AsyncAPI).To(Equal("3.0.0"))
		Expect(doc.ID).To(Equal("urn:motionstudio:asyncapi:content-svc"))
		Expect(doc.Channels).To(HaveKeyWithValue("content.svg_preview.generated.v1",
			HaveField("Address", "content.svg_preview.generated.v1")))
		Expect(doc.Channels).To(HaveKey("jobs.content.svg_preview.generate"))
		Expect(doc.Channels).To(HaveKey("identity.session.revoked.v1"))
		Expect(doc.Channels).To(HaveKey("identity.tenant.status_changed.v1"))
		Expect(doc.Actions()).To(Equal(map[string]string{
			"content.svg_preview.generated.v1.send":                                "send",
			"jobs.content.svg_preview.generate.send":                               "send",
			"jobs.content.svg_preview.generate.receive.content_svg_preview_worker": "receive",
			"identity.session.revoked.v1.receive.session_revocations":              "receive",
			"identity.tenant.status_changed.v1.receive.tenant_revocations":         "receive",
		}))
		Expect(doc.Components.Messages).To(HaveKey("content.svg_preview.generated.v1"))
	})
})
