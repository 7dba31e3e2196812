package app_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
	events "github.com/motionstudio/platform/proto-events"
)

var _ = Describe("the event contract", func() {
	It("is served without a token at /asyncapi.json, with the subjects agentteam-svc publishes and consumes", func() {
		doc := client.EventContract()
		Expect(doc.AsyncAPI).To(Equal("3.0.0"))
		Expect(doc.ID).To(Equal("urn:motionstudio:asyncapi:agentteam-svc"))
		for _, subject := range []string{"agentteam.task.moved.v1", "agentteam.run.completed.v1", "agentteam.run.failed.v1",
			"jobs.agentteam.agent.run", "identity.session.revoked.v1", "identity.tenant.status_changed.v1"} {
			Expect(doc.Channels).To(HaveKeyWithValue(subject, HaveField("Address", subject)))
		}
		Expect(doc.Actions()).To(Equal(map[string]string{
			"agentteam.task.moved.v1.send":                                 "send",
			"agentteam.run.completed.v1.send":                              "send",
			"agentteam.run.failed.v1.send":                                 "send",
			"jobs.agentteam.agent.run.send":                                "send",
			"jobs.agentteam.agent.run.receive.agentteam_agent_run_worker":  "receive",
			"identity.session.revoked.v1.receive.session_revocations":      "receive",
			"identity.tenant.status_changed.v1.receive.tenant_revocations": "receive",
		}))
	})

	It("publishes events naming their organization and payload schema in CloudEvents headers", func() {
		moved := testkit.Listen(suiteCfg.NATS.Prefix + events.SubjectTaskMoved)
		c := newCrew()
		t := newTask(c.Member.Token, newTeam(c), "contract", "")
		ok("PATCH", "/api/orgboard/tasks/"+t.ID+"/move", c.Member.Token, map[string]any{"status": "InProgress"}, nil)

		msg := testkit.AwaitMessage(moved, "task_id", t.ID)
		Expect(msg.Header.Get("ce-source")).To(Equal("motionstudio/agentteam-svc"))
		Expect(msg.Header.Get("ce-organizationid")).To(Equal(c.OrgID))
		Expect(msg.Header.Get("ce-dataschema")).To(Equal(
			"urn:motionstudio:asyncapi:agentteam-svc#/components/schemas/motionstudio.agentteam.v1.TaskMoved"))
		Expect(msg.Header).NotTo(HaveKey("ce-tenantid"))
	})

	It("queues agent-run wake-ups that name the run's organization", func() {
		w := newRunWorld()
		var r runOf
		ok("POST", "/api/assembler/runs", w.Member.Token, map[string]any{"seatId": w.seat, "workItemId": w.task}, &r)
		Expect(count(`SELECT count(*) FROM outbox WHERE subject = 'jobs.agentteam.agent.run' AND data->>'run_id' = ?
			AND data->>'organization_id' = ? AND organization_id = ? AND data_schema LIKE '%#/components/schemas/motionstudio.agentteam.v1.AgentRunJob'`,
			r.ID, w.OrgID, w.OrgID)).To(Equal(1))
	})
})
