package events_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"google.golang.org/protobuf/reflect/protoreflect"

	events "github.com/motionstudio/platform/proto-events"
	agentteamv1 "github.com/motionstudio/platform/proto-events/gen/agentteam/v1"
	contentv1 "github.com/motionstudio/platform/proto-events/gen/content/v1"
	identityv1 "github.com/motionstudio/platform/proto-events/gen/identity/v1"
)

var _ = Describe("the CloudEvents attributes of catalogue events", func() {
	It("name whom every subject concerns with a string field of its payload", func() {
		for _, e := range events.Catalogue() {
			fd := e.New().ProtoReflect().Descriptor().Fields().ByName(e.Concern.Field())
			Expect(fd).NotTo(BeNil(), "%s has no %s", e.Subject, e.Concern.Field())
			Expect(fd.Kind()).To(Equal(protoreflect.StringKind), e.Subject)
			Expect(e.Concern.Attribute()).To(MatchRegexp(`^[a-z0-9]{1,20}$`), "CloudEvents extension names are short lower-case alphanumerics")
		}
	})

	It("copy the tenant of identity events and the organization of agentteam events from the payload", func() {
		a, err := events.AttributesOf(events.SubjectPaymentConfirmed, &identityv1.PaymentConfirmed{PaymentId: "p1", TenantId: "t1"})
		Expect(err).NotTo(HaveOccurred())
		Expect(a).To(Equal(events.Attributes{
			DataSchema: "urn:motionstudio:asyncapi:identity-svc#/components/schemas/motionstudio.identity.v1.PaymentConfirmed",
			TenantID:   "t1",
		}))

		a, err = events.AttributesOf(events.SubjectAgentRunJob, &agentteamv1.AgentRunJob{RunId: "r1", OrganizationId: "o1"})
		Expect(err).NotTo(HaveOccurred())
		Expect(a).To(Equal(events.Attributes{
			DataSchema:     "urn:motionstudio:asyncapi:agentteam-svc#/components/schemas/motionstudio.agentteam.v1.AgentRunJob",
			OrganizationID: "o1",
		}))
	})

	It("leave the tenant out of a preview a service asked for", func() {
		a, err := events.AttributesOf(events.SubjectSvgPreviewGenerated, &contentv1.SvgPreviewGenerated{PreviewId: "p1"})
		Expect(err).NotTo(HaveOccurred())
		Expect(a.TenantID).To(BeEmpty())
		Expect(a.DataSchema).To(HaveSuffix("#/components/schemas/motionstudio.content.v1.SvgPreviewGenerated"))

		a, err = events.AttributesOf(events.SubjectSvgPreviewJob, &contentv1.SvgPreviewJob{PreviewId: "p1", TenantId: "t1"})
		Expect(err).NotTo(HaveOccurred())
		Expect(a.TenantID).To(Equal("t1"))
	})

	It("refuse an unknown subject, another subject's message and a missing tenant or organization", func() {
		_, err := events.AttributesOf("identity.user.deleted.v1", &identityv1.UserBanned{TenantId: "t1"})
		Expect(err).To(MatchError(ContainSubstring("not in the catalogue")))

		_, err = events.AttributesOf(events.SubjectUserRegistered, &identityv1.UserBanned{TenantId: "t1"})
		Expect(err).To(MatchError(ContainSubstring("motionstudio.identity.v1.UserRegistered")))

		_, err = events.AttributesOf(events.SubjectUserBanned, &identityv1.UserBanned{UserId: "u1"})
		Expect(err).To(MatchError(ContainSubstring("without tenant_id")))

		_, err = events.AttributesOf(events.SubjectTaskMoved, &agentteamv1.TaskMoved{TaskId: "t1"})
		Expect(err).To(MatchError(ContainSubstring("without organization_id")))
	})

	It("point every data schema into the producer's document", func() {
		for _, e := range events.Catalogue() {
			Expect(e.DataSchema()).To(HavePrefix(events.DocumentID(e.Producer()) + "#/components/schemas/"))
			Expect(strings.Count(e.DataSchema(), "#")).To(Equal(1))
		}
	})
})
