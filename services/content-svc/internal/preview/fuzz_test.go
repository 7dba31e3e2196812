package preview_test

import (
	"bytes"
	"context"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"testing"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/services/content-svc/internal/preview"
)

// acceptingStore is a preview.Store whose every target exists; it keeps the preview created.
// The operations Create never calls are left to the embedded nil interface.
type acceptingStore struct {
	preview.Store
	created *preview.Preview
}

func (*acceptingStore) TargetExists(context.Context, string, string, bool) error { return nil }

func (*acceptingStore) TargetColorKeys(context.Context, string, string, int) ([]preview.ColorKey, error) {
	return nil, nil
}

func (s *acceptingStore) Create(_ context.Context, p preview.Preview) error {
	s.created = &p
	return nil
}

// keptObjects is preview.Objects keeping the last object put.
type keptObjects struct {
	preview.Objects
	data []byte
}

func (o *keptObjects) Put(_ context.Context, _ string, r io.Reader, _ int64, _ string) error {
	data, err := io.ReadAll(r)
	o.data = data
	return err
}

// FuzzCreateImage checks the preview image rules on arbitrary bytes and limits. It never
// panics and answers only Unsupported, TooLarge or success: TooLarge exactly for an image over
// the byte limit or a PNG, JPEG or WebP header declaring more pixels than the pixel limit,
// Unsupported for anything that is not PNG, JPEG or WebP by its signature; an accepted image
// is stored byte for byte with the content type its signature names.
func FuzzCreateImage(f *testing.F) {
	var pngBuf, jpegBuf bytes.Buffer
	img := image.NewGray(image.Rect(0, 0, 16, 8))
	if err := png.Encode(&pngBuf, img); err != nil {
		f.Fatal(err)
	}
	if err := jpeg.Encode(&jpegBuf, img, nil); err != nil {
		f.Fatal(err)
	}
	for _, seed := range [][]byte{
		pngBuf.Bytes(), jpegBuf.Bytes(), pngBuf.Bytes()[:30], []byte("RIFF\x00\x00\x00\x00WEBPVP8 "),
		[]byte("RIFF\x1a\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff"),
		[]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x7f\xff\xff\xff\x7f\xff\xff\xff\x08\x00\x00\x00\x00"),
		{0xFF, 0xD8, 0xFF}, []byte("GIF89a"), nil,
	} {
		f.Add(seed, int64(128), int64(4096))
		f.Add(seed, int64(len(seed)), int64(1))
	}
	f.Fuzz(func(t *testing.T, data []byte, maxPixels, maxBytes int64) {
		if maxBytes < 1 || maxBytes > 1<<20 || maxPixels < 1 {
			return
		}
		store, objects := &acceptingStore{}, &keptObjects{}
		svc := preview.NewService(preview.Config{MaxImageBytes: maxBytes, MaxImagePixels: maxPixels}, store, objects, nil)
		p, err := svc.Create(context.Background(), preview.Request{
			TargetType: preview.TargetScene, TargetID: "0190a0f2-7b4c-7cde-8f00-000000000001",
			ColorKeys: []preview.ColorKey{{ElementKey: "bg", CurrentColor: "#fff"}},
		}, bytes.NewReader(data))

		cfg, format, decErr := image.DecodeConfig(bytes.NewReader(data))
		overPixels := decErr == nil && int64(cfg.Width)*int64(cfg.Height) > maxPixels
		kind := map[string]string{"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp"}
		if err != nil {
			e, ok := apperr.As(err)
			if !ok {
				t.Fatalf("refusal %v is no apperr", err)
			}
			switch e.Kind {
			case apperr.TooLarge:
				if int64(len(data)) <= maxBytes && !overPixels {
					t.Fatalf("%d bytes, %dx%d refused as too large (%v)", len(data), cfg.Width, cfg.Height, err)
				}
			case apperr.Unsupported:
				if decErr == nil && kind[format] != "" && int64(len(data)) <= maxBytes {
					t.Fatalf("a %s image refused as unsupported", format)
				}
			default:
				t.Fatalf("refusal %v is a %s", err, e.Kind)
			}
			return
		}
		if int64(len(data)) > maxBytes || overPixels {
			t.Fatalf("accepted %d bytes, %dx%d pixels", len(data), cfg.Width, cfg.Height)
		}
		if !bytes.Equal(objects.data, data) || store.created == nil || store.created.ID != p.ID {
			t.Fatal("accepted image is not what was stored")
		}
		if decErr == nil && kind[format] != p.ImageContentType {
			t.Fatalf("a %s image stored as %s", format, p.ImageContentType)
		}
	})
}
