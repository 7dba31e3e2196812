package app_test

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
	events "github.com/motionstudio/platform/proto-events"
)

var _ = Describe("the event contract", func() {
	It("is served without a token at /asyncapi.json, with the subjects identity-svc publishes and consumes", func() {
		doc := client.EventContract()
		Expect(doc.AsyncAPI).To(Equal("3.0.0"))
		Expect(doc.ID).To(Equal("urn:motionstudio:asyncapi:identity-svc"))
		for _, subject := range []string{
			"identity.user.registered.v1", "identity.user.banned.v1", "identity.payment.confirmed.v1",
			"identity.payment.failed.v1", "identity.payment.refunded.v1", "identity.api_key.created.v1",
			"identity.api_key.revoked.v1", "identity.tenant.updated.v1", "identity.tenant.domain_verified.v1",
			"identity.plan.activated.v1", "identity.quest.completed.v1", "identity.session.revoked.v1",
			"jobs.identity.webhook.deliver",
		} {
			Expect(doc.Channels).To(HaveKeyWithValue(subject, HaveField("Address", subject)))
			Expect(doc.Actions()).To(HaveKeyWithValue(subject+".send", "send"))
			Expect(doc.Components.Messages).To(HaveKey(subject))
		}
		Expect(doc.Actions()).To(HaveKeyWithValue("identity.payment.confirmed.v1.receive.identity_webhook_fanout", "receive"))
		Expect(doc.Actions()).To(HaveKeyWithValue("identity.payment.confirmed.v1.receive.identity_quest_progress", "receive"))
		Expect(doc.Actions()).To(HaveKeyWithValue("identity.api_key.revoked.v1.receive.api_key_revocations", "receive"))
		Expect(doc.Actions()).To(HaveKeyWithValue("jobs.identity.webhook.deliver.receive.identity_webhook_delivery", "receive"))
		Expect(doc.Actions()).NotTo(HaveKey("identity.session.revoked.v1.receive.identity_webhook_fanout"))
		Expect(doc.Channels).NotTo(HaveKey("content.svg_preview.generated.v1"))
	})

	It("publishes events naming their tenant and payload schema in CloudEvents headers", func() {
		created := testkit.Listen(cfg.NATS.Prefix + events.SubjectApiKeyCreated)
		tenantID, slug := newTenant("contract")
		admin := newMember(slug, "tenant-admin")
		r := client.Do("POST", "/v1/tenants/"+tenantID+"/api-keys", admin.Token, map[string]any{"name": "CI", "scopes": []string{"renders:read"}})
		Expect(r.Status).To(Equal(http.StatusCreated))
		var key map[string]any
		r.JSON(&key)

		msg := testkit.AwaitMessage(created, "api_key_id", key["id"].(string))
		Expect(msg.Header.Get("ce-type")).To(Equal("identity.api_key.created.v1"))
		Expect(msg.Header.Get("ce-source")).To(Equal("motionstudio/identity-svc"))
		Expect(msg.Header.Get("ce-tenantid")).To(Equal(tenantID))
		Expect(msg.Header.Get("ce-dataschema")).To(Equal(
			"urn:motionstudio:asyncapi:identity-svc#/components/schemas/motionstudio.identity.v1.ApiKeyCreated"))
		Expect(msg.Header).NotTo(HaveKey("ce-organizationid"))
	})
})
