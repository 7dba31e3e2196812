package app_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"net/http"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/testkit"
	events "github.com/motionstudio/platform/proto-events"
	"github.com/motionstudio/platform/services/content-svc/internal/preview"
	"github.com/motionstudio/platform/services/content-svc/internal/store"
)

// pngHeaderOnly is a PNG that declares a width×height RGB image and holds no pixel data: a
// few dozen bytes that would make a decoder allocate width*height*4 bytes.
func pngHeaderOnly(width, height uint32) []byte {
	chunk := func(kind string, data []byte) []byte {
		out := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
		out = append(out, kind...)
		out = append(out, data...)
		return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(append([]byte(kind), data...)))
	}
	ihdr := binary.BigEndian.AppendUint32(nil, width)
	ihdr = binary.BigEndian.AppendUint32(ihdr, height)
	ihdr = append(ihdr, 8, 2, 0, 0, 0)
	out := append([]byte("\x89PNG\r\n\x1a\n"), chunk("IHDR", ihdr)...)
	return append(out, chunk("IEND", nil)...)
}

var _ = Describe("SVG previews of images that declare too many pixels", func() {
	var sceneID string

	BeforeEach(func() {
		testkit.Truncate(db)
		sceneID = seedScene()
	})

	It("refuses the upload with 413 from the header alone", func() {
		bomb := pngHeaderOnly(20000, 20000)
		Expect(len(bomb)).To(BeNumerically("<", 100))
		body, ct := multipartBody(map[string]string{"target_type": "scene", "target_id": sceneID,
			"color_keys": `[{"element_key":"bg","current_color":"#fff"}]`}, formFile{"image", "bomb.png", bomb})
		r := client.Do("POST", "/v1/svg-previews/generate", userToken(), body, "Content-Type", ct)
		Expect(r.Status).To(Equal(http.StatusRequestEntityTooLarge))
		Expect(r.Body).To(ContainSubstring(`"code":"image_too_many_pixels"`))
		Expect(r.Body).To(ContainSubstring("20000×20000"))
		var n int64
		Expect(db.Raw(`SELECT count(*) FROM svg_previews`).Scan(&n).Error).To(Succeed())
		Expect(n).To(BeZero())
	})

	It("fails a stored one in the worker with the reason, without decoding it", func() {
		ch := generatedEvents()
		id := uuid.Must(uuid.NewV7()).String()
		p := preview.Preview{
			ID: id, TargetType: preview.TargetScene, TargetID: sceneID, Status: preview.Generating,
			ColorKeys:        []preview.ColorKey{{ElementKey: "bg", CurrentColor: "#fff"}},
			ImageKey:         "svg-previews/" + id + "/source.png",
			ImageContentType: "image/png", CreatedAt: time.Now().UTC(),
		}
		bomb := pngHeaderOnly(20000, 20000)
		_, err := appObjects().Put(context.Background(), p.ImageKey, bytes.NewReader(bomb), int64(len(bomb)), "image/png")
		Expect(err).NotTo(HaveOccurred())
		Expect(store.NewPreviews(db, outbox.NewWriter(events.SourceContent)).Create(context.Background(), p)).To(Succeed())

		ev := waitForEvent(ch, id)
		Expect(ev.Status).To(Equal("Failed"))
		Expect(ev.FailureReason).To(Equal("the image is 20000×20000 pixels; at most 16777216 pixels are accepted"))
	})
})
