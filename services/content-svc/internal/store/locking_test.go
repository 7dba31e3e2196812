package store_test

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
	"github.com/motionstudio/platform/services/content-svc/internal/editor"
	"github.com/motionstudio/platform/services/content-svc/internal/render"
	"github.com/motionstudio/platform/services/content-svc/internal/site"
	"github.com/motionstudio/platform/services/content-svc/internal/store"
)

// seededTemplate is a published container with one project.
type seededTemplate struct{ container, project string }

// seedEach builds a published template for each caller.
func seedEach() []seededTemplate {
	GinkgoHelper()
	out := make([]seededTemplate, testkit.Contenders)
	for i := range out {
		out[i].project = seedProject(context.Background(), 0, 0)
		Expect(db.Raw(`SELECT container_id FROM projects WHERE id = ?`, out[i].project).Scan(&out[i].container).Error).To(Succeed())
	}
	return out
}

var _ = Describe("locking rows from 30 callers at once over a pool of 5 connections", func() {
	// Each caller locks a row of its own: the rows do not queue the callers, so a call that
	// stalls waits for a connection that a transaction holds while it waits for another.
	// UpdateContainer and SetPublished are left out: every change to the catalog's counts
	// updates the one catalog_version row, which queues those writes one after another.
	DescribeTable("completes every call within a second", Serial, func(prepare func() testkit.ContendedCall) { testkit.Contend(dsn, prepare) },
		Entry("updating projects", func() testkit.ContendedCall {
			seeds := seedEach()
			return func(ctx context.Context, small *gorm.DB, i int) error {
				_, err := store.NewCatalog(small).UpdateProject(ctx, seeds[i].project, func(p *catalog.Project) error {
					p.Name = fmt.Sprintf("P%d", i)
					return nil
				})
				return err
			}
		}),
		Entry("adding scenes, each project's row locked", func() testkit.ContendedCall {
			seeds := seedEach()
			return func(ctx context.Context, small *gorm.DB, i int) error {
				key := fmt.Sprintf("s%d", i)
				_, err := editor.NewService(store.NewEditor(small), time.Now, newID).CreateScene(ctx, seeds[i].project, editor.SceneFields{Key: &key})
				return err
			}
		}),
		Entry("updating render servers", func() testkit.ContendedCall {
			ids := make([]string, testkit.Contenders)
			for i := range ids {
				ids[i] = newID()
				Expect(store.NewRenderServers(db).CreateServer(context.Background(), render.Server{
					ID: ids[i], Name: "r-" + ids[i], BaseURL: "https://render.example", Region: "eu", IsActive: true,
					MaxParallelRenders: 1, CreatedAt: time.Now().UTC(),
				})).To(Succeed())
			}
			return func(ctx context.Context, small *gorm.DB, i int) error {
				_, err := store.NewRenderServers(small).UpdateServer(ctx, ids[i], func(s *render.Server) error {
					s.MaxParallelRenders = i + 1
					return nil
				})
				return err
			}
		}),
		Entry("deciding comments, rating their containers", func() testkit.ContendedCall {
			ids := make([]string, testkit.Contenders)
			for i, s := range seedEach() {
				ids[i] = newID()
				rate := 4.0
				Expect(store.NewSite(db).CreateComment(context.Background(), site.Comment{
					ID: ids[i], Content: "nice", Rate: &rate, ContainerID: s.container, AuthorID: newID(), Status: site.Pending,
					CreatedAt: time.Now().UTC(),
				})).To(Succeed())
			}
			return func(ctx context.Context, small *gorm.DB, i int) error {
				_, err := store.NewSite(small).DecideComment(ctx, ids[i], site.Approved)
				return err
			}
		}),
	)
})
