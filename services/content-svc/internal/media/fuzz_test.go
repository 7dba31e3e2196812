package media_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/sfnt"

	"github.com/motionstudio/platform/services/content-svc/internal/media"
)

// FuzzParseFontFormat checks the font upload's file check on arbitrary bytes. It never panics;
// an accepted file names its format by its signature with the matching content type; a TTF or
// OTF file parses with sfnt and has glyphs; a WOFF or WOFF2 file declares its own length, at
// least one table and a zero reserved field.
func FuzzParseFontFormat(f *testing.F) {
	woff := make([]byte, 44+20+4)
	copy(woff, "wOFF")
	binary.BigEndian.PutUint32(woff[8:], uint32(len(woff)))
	binary.BigEndian.PutUint16(woff[12:], 1)
	binary.BigEndian.PutUint32(woff[48:], 64)
	binary.BigEndian.PutUint32(woff[52:], 4)
	woff2 := make([]byte, 48+8)
	copy(woff2, "wOF2")
	binary.BigEndian.PutUint32(woff2[8:], uint32(len(woff2)))
	binary.BigEndian.PutUint16(woff2[12:], 1)
	binary.BigEndian.PutUint32(woff2[20:], 8)
	for _, seed := range [][]byte{
		goregular.TTF, goregular.TTF[:200], woff, woff[:43], woff2, woff2[:47],
		[]byte("OTTO"), []byte("true\x00\x01"), []byte{0, 1, 0, 0}, []byte("wOFF\xff\xff\xff\xff"), nil,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		format, contentType, ok := media.ParseFontFormat(data)
		if !ok {
			if format != "" || contentType != "" {
				t.Fatalf("refused file named %q %q", format, contentType)
			}
			return
		}
		want := map[string]string{"ttf": "font/ttf", "otf": "font/otf", "woff": "font/woff", "woff2": "font/woff2"}
		if want[format] == "" || want[format] != contentType {
			t.Fatalf("accepted format %q with content type %q", format, contentType)
		}
		be := binary.BigEndian
		switch format {
		case "ttf", "otf":
			fnt, err := sfnt.Parse(data)
			if err != nil || fnt.NumGlyphs() == 0 {
				t.Fatalf("accepted a %s that does not parse: %v", format, err)
			}
			if format == "otf" && !bytes.HasPrefix(data, []byte("OTTO")) {
				t.Fatalf("accepted an otf without its signature")
			}
		case "woff", "woff2":
			sig := map[string]string{"woff": "wOFF", "woff2": "wOF2"}[format]
			if !bytes.HasPrefix(data, []byte(sig)) || int(be.Uint32(data[8:])) != len(data) ||
				be.Uint16(data[12:]) == 0 || be.Uint16(data[14:]) != 0 {
				t.Fatalf("accepted a %s with an inconsistent header", format)
			}
		}
	})
}
