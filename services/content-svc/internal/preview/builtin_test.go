package preview_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"image"
	"image/color"
	"image/png"
	"regexp"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/services/content-svc/internal/preview"
)

type svgDoc struct {
	ViewBox string `xml:"viewBox,attr"`
	Paths   []struct {
		Key string `xml:"data-element-key,attr"`
		D   string `xml:"d,attr"`
	} `xml:"path"`
}

var rectPattern = regexp.MustCompile(`M(\d+) (\d+)h(\d+)v(\d+)h-(\d+)z`)

// area sums the cells a path's rectangles cover.
func area(d string) int {
	total := 0
	for _, m := range rectPattern.FindAllStringSubmatch(d, -1) {
		w, _ := strconv.Atoi(m[3])
		h, _ := strconv.Atoi(m[4])
		total += w * h
	}
	return total
}

func pngOf(img image.Image) []byte {
	var buf bytes.Buffer
	Expect(png.Encode(&buf, img)).To(Succeed())
	return buf.Bytes()
}

var _ = Describe("the built-in generator", func() {
	keys := []preview.ColorKey{
		{ElementKey: "sky", CurrentColor: "#3366ff"},
		{ElementKey: "sun", CurrentColor: "#ffcc00"},
		{ElementKey: "unused", CurrentColor: "#00ff00"},
	}

	It("traces each color's cells into one path, covering the image exactly once", func() {
		img := image.NewRGBA(image.Rect(0, 0, 40, 20))
		for y := range 20 {
			for x := range 40 {
				c := color.RGBA{0x30, 0x60, 0xf0, 255}
				if (x-20)*(x-20)+(y-10)*(y-10) < 36 {
					c = color.RGBA{0xff, 0xd0, 0x10, 255}
				}
				img.Set(x, y, c)
			}
		}
		out, err := preview.NewBuiltin().Generate(context.Background(), preview.Input{Image: pngOf(img), ColorKeys: keys})
		Expect(err).NotTo(HaveOccurred())
		Expect(out.DetectedColorKeys).To(Equal([]string{"sky", "sun"}))

		var doc svgDoc
		Expect(xml.Unmarshal(out.SVG, &doc)).To(Succeed())
		Expect(doc.ViewBox).To(Equal("0 0 40 20"))
		Expect(doc.Paths).To(HaveLen(3))
		Expect(doc.Paths[2].D).To(BeEmpty())
		sun := area(doc.Paths[1].D)
		Expect(sun).To(BeNumerically(">", 50))
		Expect(area(doc.Paths[0].D) + sun).To(Equal(40 * 20))
	})

	It("samples large images on a bounded grid", func() {
		img := image.NewRGBA(image.Rect(0, 0, 1000, 500))
		out, err := (&preview.Builtin{MaxSide: 100}).Generate(context.Background(), preview.Input{Image: pngOf(img), ColorKeys: keys})
		Expect(err).NotTo(HaveOccurred())
		var doc svgDoc
		Expect(xml.Unmarshal(out.SVG, &doc)).To(Succeed())
		Expect(doc.ViewBox).To(Equal("0 0 100 50"))
		Expect(area(doc.Paths[0].D) + area(doc.Paths[1].D) + area(doc.Paths[2].D)).To(Equal(100 * 50))
	})

	It("escapes element keys and calls undecodable images unusable", func() {
		img := image.NewRGBA(image.Rect(0, 0, 2, 2))
		out, err := preview.NewBuiltin().Generate(context.Background(), preview.Input{
			Image: pngOf(img), ColorKeys: []preview.ColorKey{{ElementKey: `a"<b>`, CurrentColor: "#000"}},
		})
		Expect(err).NotTo(HaveOccurred())
		var doc svgDoc
		Expect(xml.Unmarshal(out.SVG, &doc)).To(Succeed())
		Expect(doc.Paths[0].Key).To(Equal(`a"<b>`))

		_, err = preview.NewBuiltin().Generate(context.Background(), preview.Input{Image: []byte("nope"), ColorKeys: keys})
		Expect(preview.IsUnusable(err)).To(BeTrue())
	})
})
