package access_test

import (
	"context"
	"net/http"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
)

type directory struct {
	roles map[string]access.Role
	teams map[string]string
}

func (d directory) RoleOf(_ context.Context, org, member string) (access.Role, bool, error) {
	r, ok := d.roles[org+"/"+member]
	return r, ok, nil
}

func (d directory) TeamRole(ctx context.Context, team, member string) (string, access.Role, bool, error) {
	org, ok := d.teams[team]
	if !ok {
		return "", "", false, access.TeamNotFound()
	}
	r, ok, err := d.RoleOf(ctx, org, member)
	return org, r, ok, err
}

var _ = Describe("the capability table", func() {
	all := []access.Capability{access.ViewBoard, access.WorkTasks, access.CreateProductsAndTeams, access.ConfigureAgents, access.ManageSkills, access.ManageApiKeys}

	DescribeTable("grants each role exactly its capabilities",
		func(role access.Role, granted ...access.Capability) {
			for _, c := range all {
				Expect(role.Can(c)).To(Equal(slices.Contains(granted, c)), "%s %s", role, c)
			}
		},
		Entry("Owner holds all", access.Owner, access.ViewBoard, access.WorkTasks, access.CreateProductsAndTeams, access.ConfigureAgents, access.ManageSkills, access.ManageApiKeys),
		Entry("TeamOwner configures agents and manages skills", access.TeamOwner, access.ViewBoard, access.WorkTasks, access.ConfigureAgents, access.ManageSkills),
		Entry("Member views the board and works tasks", access.Member, access.ViewBoard, access.WorkTasks),
		Entry("an unknown role holds nothing", access.Role("Admin")),
	)
})

var _ = Describe("checking a capability against the scope chain", func() {
	dir := directory{
		roles: map[string]access.Role{"o1/owner": access.Owner, "o1/member": access.Member},
		teams: map[string]string{"t1": "o1"},
	}
	checker := access.NewChecker(dir)
	ctx := context.Background()

	It("resolves a team to its organization", func() {
		org, err := checker.Require(ctx, "member", access.WorkTasks, access.Team("t1"))
		Expect(err).NotTo(HaveOccurred())
		Expect(org).To(Equal("o1"))
	})

	It("refuses a capability the role lacks with an empty 403", func() {
		_, err := checker.Require(ctx, "member", access.ConfigureAgents, access.Team("t1"))
		e, ok := apperr.As(err)
		Expect(ok).To(BeTrue())
		Expect(e.Kind.Status()).To(Equal(http.StatusForbidden))
		Expect(e.Message).To(BeEmpty())
	})

	It("refuses a stranger everything", func() {
		_, err := checker.Require(ctx, "stranger", access.ViewBoard, access.Org("o1"))
		Expect(apperr.Is(err, apperr.Forbidden)).To(BeTrue())
	})

	It("answers Team not found. for an unknown team before any role check", func() {
		_, err := checker.Require(ctx, "stranger", access.ViewBoard, access.Team("nope"))
		e, _ := apperr.As(err)
		Expect(e.Kind).To(Equal(apperr.NotFound))
		Expect(e.Message).To(Equal("Team not found."))
	})
})
