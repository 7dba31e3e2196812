package app_test

import (
	"bytes"
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/natsx"
	"github.com/motionstudio/platform/pkg/testkit"
	events "github.com/motionstudio/platform/proto-events"
	contentv1 "github.com/motionstudio/platform/proto-events/gen/content/v1"
)

var _ = Describe("an SVG preview whose worker died mid-generation", func() {
	BeforeEach(func() { testkit.Truncate(db) })

	It("is generated shortly after the dead worker's lease ends, without waiting for the stale sweep", func(ctx context.Context) {
		sceneID := seedScene()
		id := uuid.Must(uuid.NewV7()).String()
		imageKey := "svg-previews/" + id + "/source.png"
		png := quadrants(quadrantColors, encodePNG)
		_, err := appObjects().Put(ctx, imageKey, bytes.NewReader(png), int64(len(png)), "image/png")
		Expect(err).NotTo(HaveOccurred())
		leaseEnds := time.Now().Add(3 * time.Second)
		Expect(db.Exec(`INSERT INTO svg_previews (id, target_type, target_id, color_keys, image_key, image_content_type,
			status, attempts, lease_owner, lease_until) VALUES (?, 'scene', ?, ?, ?, 'image/png', 'Generating', 1, 'dead-worker', ?)`,
			id, sceneID, `[{"element_key":"bg","current_color":"#fff"}]`, imageKey, leaseEnds).Error).To(Succeed())

		// The redelivery of the job the dead worker never acknowledged.
		jobs, err := natsx.Connect(ctx, natsx.Config{URL: testkit.NATSURL(), Prefix: natsPrefix}, "redelivery", slog.New(slog.DiscardHandler))
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(jobs.Close)
		ev, err := natsx.NewEvent(events.SourceContent, events.SubjectSvgPreviewJob, events.SubjectSvgPreviewJob, &contentv1.SvgPreviewJob{PreviewId: id})
		Expect(err).NotTo(HaveOccurred())
		Expect(jobs.Publish(ctx, ev)).To(Succeed())

		status := func() string {
			var s string
			Expect(db.Raw(`SELECT status FROM svg_previews WHERE id = ?`, id).Scan(&s).Error).To(Succeed())
			return s
		}
		Consistently(status).WithTimeout(2 * time.Second).Should(Equal("Generating"))
		Eventually(status).WithTimeout(time.Until(leaseEnds) + 5*time.Second).Should(Equal("Ready"))
	})
})
