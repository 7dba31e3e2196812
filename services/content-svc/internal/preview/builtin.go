package preview

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"image"
	_ "image/jpeg" // decoders for image.Decode
	_ "image/png"
	"sort"
	"strconv"

	_ "golang.org/x/image/webp"
)

// defaultMaxSide is the built-in generator's grid size on the image's longer side.
const defaultMaxSide = 160

// Builtin is the PreviewGenerator used when no AI service is configured. It samples the image
// on a grid of at most MaxSide cells on its longer side, gives each cell the nearest of the
// requested colors, and traces each color's cells into one SVG path (rectangles merged along
// rows and then down columns), so the SVG holds exactly one region per color key.
type Builtin struct {
	MaxSide int
}

// NewBuiltin returns a Builtin with the default grid size.
func NewBuiltin() *Builtin { return &Builtin{MaxSide: defaultMaxSide} }

type rgb struct{ r, g, b int }

func parseHex(s string) rgb {
	h := s[1:]
	if len(h) == 3 {
		h = string([]byte{h[0], h[0], h[1], h[1], h[2], h[2]})
	}
	v, _ := strconv.ParseUint(h, 16, 32)
	return rgb{int(v >> 16 & 0xff), int(v >> 8 & 0xff), int(v & 0xff)}
}

// rect is a run of cells of one color: columns [x0, x1) and rows [y0, y1).
type rect struct{ color, x0, x1, y0, y1 int }

// Generate traces in.Image. It returns an Unusable error when the image cannot be decoded.
func (b *Builtin) Generate(ctx context.Context, in Input) (Output, error) {
	img, _, err := image.Decode(bytes.NewReader(in.Image))
	if err != nil {
		return Output{}, Unusable(fmt.Errorf("the image cannot be decoded: %w", err))
	}
	bounds := img.Bounds()
	w, h := bounds.Dx(), bounds.Dy()
	if w == 0 || h == 0 {
		return Output{}, Unusable(fmt.Errorf("the image is empty"))
	}
	gw, gh := w, h
	if side := max(b.MaxSide, 1); max(w, h) > side {
		gw, gh = max(w*side/max(w, h), 1), max(h*side/max(w, h), 1)
	}
	palette := make([]rgb, len(in.ColorKeys))
	for i, k := range in.ColorKeys {
		palette[i] = parseHex(k.CurrentColor)
	}
	grid := make([]int, gw*gh)
	for y := range gh {
		if err := ctx.Err(); err != nil {
			return Output{}, err
		}
		for x := range gw {
			r, g, bl, _ := img.At(bounds.Min.X+x*w/gw+w/gw/2, bounds.Min.Y+y*h/gh+h/gh/2).RGBA()
			grid[y*gw+x] = nearest(palette, rgb{int(r >> 8), int(g >> 8), int(bl >> 8)})
		}
	}
	rects := trace(grid, gw, gh)
	return Output{SVG: render(in.ColorKeys, rects, gw, gh, w, h), DetectedColorKeys: detected(in.ColorKeys, rects)}, nil
}

func nearest(palette []rgb, c rgb) int {
	best, bestD := 0, -1
	for i, p := range palette {
		dr, dg, db := p.r-c.r, p.g-c.g, p.b-c.b
		// Weighted by the eye's sensitivity, a cheap stand-in for a perceptual distance.
		d := 3*dr*dr + 4*dg*dg + 2*db*db
		if bestD < 0 || d < bestD {
			best, bestD = i, d
		}
	}
	return best
}

// trace covers the grid with rectangles of one color each: runs along each row, merged with
// the identical run of the row below.
func trace(grid []int, w, h int) []rect {
	type run struct{ color, x0, x1 int }
	open := map[run]int{}
	var out []rect
	for y := 0; y <= h; y++ {
		row := map[run]bool{}
		if y < h {
			for x := 0; x < w; {
				c, x0 := grid[y*w+x], x
				for x < w && grid[y*w+x] == c {
					x++
				}
				row[run{c, x0, x}] = true
			}
		}
		for r, y0 := range open {
			if !row[r] {
				out = append(out, rect{r.color, r.x0, r.x1, y0, y})
				delete(open, r)
			}
		}
		for r := range row {
			if _, ok := open[r]; !ok {
				open[r] = y
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.color != b.color {
			return a.color < b.color
		}
		if a.y0 != b.y0 {
			return a.y0 < b.y0
		}
		return a.x0 < b.x0
	})
	return out
}

func render(keys []ColorKey, rects []rect, gw, gh, w, h int) []byte {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" preserveAspectRatio="none" shape-rendering="crispEdges">`, w, h, gw, gh)
	i := 0
	for c, k := range keys {
		buf.WriteString(`<path data-element-key="`)
		_ = xml.EscapeText(&buf, []byte(k.ElementKey))
		fmt.Fprintf(&buf, `" fill="%s" d="`, k.CurrentColor)
		for ; i < len(rects) && rects[i].color == c; i++ {
			r := rects[i]
			fmt.Fprintf(&buf, "M%d %dh%dv%dh-%dz", r.x0, r.y0, r.x1-r.x0, r.y1-r.y0, r.x1-r.x0)
		}
		buf.WriteString(`"/>`)
	}
	buf.WriteString(`</svg>`)
	return buf.Bytes()
}

func detected(keys []ColorKey, rects []rect) []string {
	seen := make([]bool, len(keys))
	for _, r := range rects {
		seen[r.color] = true
	}
	var out []string
	for i, k := range keys {
		if seen[i] {
			out = append(out, k.ElementKey)
		}
	}
	return out
}
