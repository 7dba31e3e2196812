package app_test

import (
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/cache"
)

// notified bounds how long a change may take to reach another replica's memory.
const notified = 2 * time.Second

var _ = Describe("roles and boards kept in memory by two replicas of the service", func() {
	var (
		c        crew
		team     string
		replicas []*testkit.API
	)
	BeforeEach(func() {
		c = newCrew()
		team = newTeam(c)
		replicas = []*testkit.API{client, serve(suiteCfg)}
		Eventually(func() bool { return listening(replicas[1]) }).Should(BeTrue())
	})

	status := func(api *testkit.API, path, token string) func() int {
		return func() int { return api.Do("GET", path, token, nil).Status }
	}
	// each reads the path as token on both replicas, so both hold the caller's role.
	each := func(path, token string, want int) {
		GinkgoHelper()
		for _, api := range replicas {
			Expect(status(api, path, token)()).To(Equal(want))
		}
	}
	eventually := func(path, token string, want int) {
		GinkgoHelper()
		for _, api := range replicas {
			Eventually(status(api, path, token)).WithTimeout(notified).Should(Equal(want))
		}
	}

	It("refuses a removed member on every replica once the removal is notified", func() {
		board := "/api/orgboard/board?teamId=" + team
		each(board, c.Member.Token, http.StatusOK)
		Expect(db.Exec(`DELETE FROM memberships WHERE organization_id = ? AND member_id = ?`, c.OrgID, c.Member.ID).Error).To(Succeed())
		eventually(board, c.Member.Token, http.StatusForbidden)
	})

	It("applies a changed role on every replica, in both directions", func() {
		performance := "/api/orgboard/performance?organizationId=" + c.OrgID
		each(performance, c.Owner.Token, http.StatusOK)
		each(performance, c.Member.Token, http.StatusForbidden)
		Expect(db.Exec(`UPDATE memberships SET role = 'Member' WHERE organization_id = ? AND member_id = ?`, c.OrgID, c.Owner.ID).Error).To(Succeed())
		Expect(db.Exec(`UPDATE memberships SET role = 'Owner' WHERE organization_id = ? AND member_id = ?`, c.OrgID, c.Member.ID).Error).To(Succeed())
		eventually(performance, c.Owner.Token, http.StatusForbidden)
		eventually(performance, c.Member.Token, http.StatusOK)
	})

	It("shows a move made through one replica on the other's board", func() {
		t := newTask(c.Member.Token, team, "Replicated", "")
		columnOf := func(api *testkit.API) func() string {
			return func() string {
				var b struct {
					Columns []struct {
						Status string
						Tasks  []task
					}
				}
				r := api.Do("GET", "/api/orgboard/board?teamId="+team, c.Member.Token, nil)
				Expect(r.Status).To(Equal(http.StatusOK))
				r.JSON(&b)
				for _, col := range b.Columns {
					for _, x := range col.Tasks {
						if x.ID == t.ID {
							return col.Status
						}
					}
				}
				return ""
			}
		}
		Expect(columnOf(replicas[1])()).To(Equal("Backlog"))
		Expect(move(c.Member.Token, t.ID, "InProgress").Status).To(Equal(http.StatusOK))
		Expect(columnOf(replicas[0])()).To(Equal("InProgress"), "the writing replica reads its own write at once")
		Eventually(columnOf(replicas[1])).WithTimeout(notified).Should(Equal("InProgress"))
	})

	It("serves no stale role after the listeners lose their connections, and caches again once they listen", func() {
		board := "/api/orgboard/board?teamId=" + team
		other := join(c.Owner, c.OrgID, "Member")
		each(board, c.Member.Token, http.StatusOK)
		each(board, other.Token, http.StatusOK)

		Expect(db.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = current_database() AND application_name = ?`, cache.ApplicationName).Error).To(Succeed())
		Expect(db.Exec(`DELETE FROM memberships WHERE organization_id = ? AND member_id = ?`, c.OrgID, c.Member.ID).Error).To(Succeed())
		eventually(board, c.Member.Token, http.StatusForbidden)

		for _, api := range replicas {
			Eventually(func() bool { return listening(api) }).WithTimeout(10 * time.Second).Should(BeTrue())
		}
		each(board, other.Token, http.StatusOK)
		Expect(db.Exec(`DELETE FROM memberships WHERE organization_id = ? AND member_id = ?`, c.OrgID, other.ID).Error).To(Succeed())
		eventually(board, other.Token, http.StatusForbidden)
	})
})

// listening reports whether the replica's cache listener listens (its gauge reads 1).
func listening(api *testkit.API) bool {
	r := api.Do("GET", "/metrics", "", nil)
	return strings.Contains(string(r.Body), "\nagentteam_cache_listening 1\n")
}
