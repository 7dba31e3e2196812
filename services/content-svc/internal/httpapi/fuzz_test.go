package httpapi_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/pkg/paging"
	"github.com/motionstudio/platform/services/content-svc/internal/httpapi"
	"github.com/motionstudio/platform/services/content-svc/internal/media"
	"github.com/motionstudio/platform/services/content-svc/internal/preview"
)

// Limits of the fuzzed preview service, small so that the fuzzer reaches them.
const (
	fuzzImageBytes  = 4096
	fuzzImagePixels = 64 * 64
)

// recorder keeps what the domain services hand to storage: the last font, preview and page.
type recorder struct {
	mu      sync.Mutex
	font    *media.Font
	preview *preview.Preview
	page    *paging.Page
	objects map[string][]byte
}

func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.font, r.preview, r.page, r.objects = nil, nil, nil, map[string][]byte{}
}

// mediaStore is media.Store over the recorder; the operations the fuzzed routes never reach
// are left to the embedded nil interface.
type mediaStore struct {
	media.Store
	rec *recorder
}

func (s mediaStore) CreateFont(_ context.Context, f media.Font) error {
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	s.rec.font = &f
	return nil
}

func (s mediaStore) Music(_ context.Context, _ media.MusicFilter, p paging.Page) ([]media.MusicTrack, int, error) {
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	s.rec.page = &p
	return nil, 0, nil
}

// previewStore is preview.Store over the recorder: every target exists and has no color
// elements of its own.
type previewStore struct {
	preview.Store
	rec *recorder
}

func (previewStore) TargetExists(context.Context, string, string, bool) error { return nil }

func (previewStore) TargetColorKeys(context.Context, string, string, int) ([]preview.ColorKey, error) {
	return nil, nil
}

func (s previewStore) Create(_ context.Context, p preview.Preview) error {
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	s.rec.preview = &p
	return nil
}

// objects is both services' object storage over the recorder.
type objects struct{ rec *recorder }

func (o objects) Put(_ context.Context, key string, r io.Reader, _ int64, _ string) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	o.rec.mu.Lock()
	defer o.rec.mu.Unlock()
	o.rec.objects[key] = data
	return nil
}

func (objects) Read(context.Context, string, int64) ([]byte, error) { return nil, io.EOF }
func (objects) Remove(context.Context, string) error                { return nil }
func (objects) URL(key string) string                               { return "http://objects.test/" + key }

// fuzzServer is a real httpx server with the package's routes over the real font, music and
// preview rules, whose storage is the recorder.
func fuzzServer(f *testing.F) (*httpx.Server, *recorder) {
	rec := &recorder{}
	rec.reset()
	srv, err := httpx.New(httpx.Options{Service: "fuzz", Logger: slog.New(slog.DiscardHandler), LargeBody: httpapi.LargeBody})
	if err != nil {
		f.Fatal(err)
	}
	h := httpapi.NewHandler(httpapi.Deps{
		Media: media.NewService(mediaStore{rec: rec}, objects{rec}),
		Previews: preview.NewService(preview.Config{MaxImageBytes: fuzzImageBytes, MaxImagePixels: fuzzImagePixels},
			previewStore{rec: rec}, objects{rec}, nil),
		ObjectURL: objects{rec}.URL,
	})
	httpapi.RegisterHandlers(srv.Echo, h)
	return srv, rec
}

// cleanText is the text Postgres can store and the edge lets through: valid UTF-8 without NUL.
func cleanText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// form is a multipart/form-data body with its boundary.
func form(t testing.TB, fields [][2]string, fileField string, file []byte) ([]byte, string) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, kv := range fields {
		if err := w.WriteField(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	if fileField != "" {
		fw, err := w.CreateFormFile(fileField, "upload.bin")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fw.Write(file); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), w.Boundary()
}

// pngImage is a w×h PNG.
func pngImage(t testing.TB, w, h int) []byte {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// woffFont is the smallest file with a consistent WOFF container header: one table whose
// data follows the table directory.
func woffFont() []byte {
	data := make([]byte, 44+20+4)
	copy(data, "wOFF")
	be := binary.BigEndian
	be.PutUint32(data[8:], uint32(len(data)))
	be.PutUint16(data[12:], 1)
	copy(data[44:], "head")
	be.PutUint32(data[48:], 64)
	be.PutUint32(data[52:], 4)
	return data
}

// FuzzUploadForms sends arbitrary multipart bodies to the font upload and the SVG preview
// routes, through the real server, handlers and font and preview rules. It never answers 5xx,
// only 2xx, 400, 413 or 415; and whatever is accepted reaches storage as the rules promise: a
// font with clean, trimmed, non-empty names, a known direction and a file that parses as a
// font; a preview of a known target type with 1 to 64 distinct color keys of clean text and
// #RGB or #RRGGBB colors, and an image within the byte and pixel limits.
func FuzzUploadForms(f *testing.F) {
	srv, rec := fuzzServer(f)
	img := pngImage(f, 8, 8)
	target := [2]string{"target_id", "0190a0f2-7b4c-7cde-8f00-000000000001"}
	seeds := []struct {
		font   bool
		fields [][2]string
		file   string
		data   []byte
	}{
		{true, [][2]string{{"name", "Inter"}, {"family", "Inter"}, {"direction", "ltr"}, {"is_premium", "true"}}, "file", woffFont()},
		{true, [][2]string{{"name", "In\x00ter"}, {"family", "Inter"}}, "file", woffFont()},
		{true, [][2]string{{"name", "\xff"}, {"family", "Inter"}}, "file", woffFont()},
		{true, [][2]string{{"name", "Inter"}, {"family", "Inter"}, {"is_premium", "maybe"}}, "file", woffFont()},
		{true, [][2]string{{"name", "Inter"}, {"family", "Inter"}}, "file", []byte("OTTO not really")},
		{true, [][2]string{{"name", "Inter"}}, "", nil},
		{false, [][2]string{{"target_type", "project"}, target, {"color_keys", `[{"element_key":"bg","current_color":"#fff"}]`}}, "image", img},
		{false, [][2]string{{"target_type", "scene"}, target, {"color_keys", `{"element_key":"bg","current_color":"#ffffff"}`}, {"color_keys[]", `[{"element_key":"fg","current_color":"#000"}]`}}, "image", img},
		{false, [][2]string{{"target_type", "scene"}, target, {"color_keys[0][element_key]", "bg"}, {"color_keys[0][current_color]", "#abc"}, {"color_keys[1].element_key", "fg"}, {"color_keys[1].current_color", "#def"}}, "image", img},
		{false, [][2]string{{"target_type", "scene"}, target, {"color_keys[0][element_key]", "b\x00g"}, {"color_keys[0][current_color]", "#abc"}}, "image", img},
		{false, [][2]string{{"target_type", "scene"}, target, {"color_keys", `[{"element_key":"b\u0000g","current_color":"#abc"}]`}}, "image", img},
		{false, [][2]string{{"target_type", "scene"}, target, {"color_keys", `[{"element_key":"bg","current_color":"#abc"}`}}, "image", img},
		{false, [][2]string{{"target_type", "scene"}, target, {"color_keys", `[{"element_key":"bg","current_color":"#abc"}]`}}, "image", pngImage(f, 65, 64)},
		{false, [][2]string{{"target_type", "scene"}, target, {"color_keys", `[{"element_key":"bg","current_color":"#abc"}]`}}, "image", bytes.Repeat([]byte{0xFF, 0xD8, 0xFF}, fuzzImageBytes)},
		{false, [][2]string{{"target_type", "scene"}, target}, "", nil},
	}
	for _, s := range seeds {
		body, boundary := form(f, s.fields, s.file, s.data)
		f.Add(body, boundary, s.font)
	}
	f.Add([]byte("--x\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nabc"), "x", true)
	f.Add([]byte("not multipart"), "", false)
	f.Fuzz(func(t *testing.T, body []byte, boundary string, font bool) {
		rec.reset()
		path := "/v1/svg-previews/generate"
		if font {
			path = "/v1/fonts"
		}
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "multipart/form-data; boundary="+boundary)
		res := httptest.NewRecorder()
		srv.Echo.ServeHTTP(res, req)

		switch res.Code {
		case http.StatusCreated, http.StatusAccepted, http.StatusBadRequest, http.StatusRequestEntityTooLarge,
			http.StatusUnsupportedMediaType:
		default:
			t.Fatalf("%s answered %d: %s", path, res.Code, res.Body)
		}
		if res.Code >= 300 {
			return
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if font {
			checkStoredFont(t, rec)
		} else {
			checkStoredPreview(t, rec)
		}
	})
}

func checkStoredFont(t *testing.T, rec *recorder) {
	fo := rec.font
	if fo == nil {
		t.Fatal("font answered 201 without storing a font")
	}
	for _, s := range []string{fo.Name, fo.Family} {
		if !cleanText(s) || s == "" || s != strings.TrimSpace(s) || utf8.RuneCountInString(s) > 200 {
			t.Fatalf("stored the font name %q", s)
		}
	}
	if fo.Direction != "ltr" && fo.Direction != "rtl" {
		t.Fatalf("stored the direction %q", fo.Direction)
	}
	if format, _, ok := media.ParseFontFormat(rec.objects[fo.ObjectKey]); !ok || format != fo.Format {
		t.Fatalf("stored a %s font whose file is not one", fo.Format)
	}
}

func checkStoredPreview(t *testing.T, rec *recorder) {
	p := rec.preview
	if p == nil {
		t.Fatal("preview answered 202 without storing a preview")
	}
	if p.TargetType != preview.TargetProject && p.TargetType != preview.TargetScene {
		t.Fatalf("stored the target type %q", p.TargetType)
	}
	if len(p.ColorKeys) < 1 || len(p.ColorKeys) > 64 {
		t.Fatalf("stored %d color keys", len(p.ColorKeys))
	}
	seen := map[string]bool{}
	for _, k := range p.ColorKeys {
		if !cleanText(k.ElementKey) || strings.TrimSpace(k.ElementKey) == "" || seen[k.ElementKey] {
			t.Fatalf("stored the element key %q", k.ElementKey)
		}
		seen[k.ElementKey] = true
		if c := strings.TrimPrefix(k.CurrentColor, "#"); (len(c) != 3 && len(c) != 6) || strings.Trim(c, "0123456789abcdefABCDEF") != "" || c == k.CurrentColor {
			t.Fatalf("stored the color %q", k.CurrentColor)
		}
	}
	data := rec.objects[p.ImageKey]
	if len(data) == 0 || len(data) > fuzzImageBytes {
		t.Fatalf("stored a %d-byte image", len(data))
	}
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(data)); err == nil && cfg.Width*cfg.Height > fuzzImagePixels {
		t.Fatalf("stored a %d×%d image", cfg.Width, cfg.Height)
	}
}

// FuzzMusicQuery sends arbitrary query strings to the paged music list through the generated
// parameter binding and the paging rules. It answers 200 or a 400 problem only; a page it
// answers lies within the paging bounds and is the page and page_size given, or the defaults.
func FuzzMusicQuery(f *testing.F) {
	srv, rec := fuzzServer(f)
	for _, q := range []string{
		"", "page=2&page_size=50", "page=0", "page=-1", "page=100001", "page_size=101", "page_size=0",
		"page=1&page=2", "page=1.5", "page=%2B3", "page=99999999999999999999", "page=0x10", "page= 1",
		"page=%00", "page=%ff", "page=%zz", "q=%00", "min_duration=2&max_duration=1", "min_duration=NaN",
		"max_duration=1e400", "genre=rock&mood=calm&q=a;b",
	} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, rawQuery string) {
		rec.reset()
		req := httptest.NewRequest(http.MethodGet, "/v1/music", nil)
		req.URL.RawQuery = rawQuery
		res := httptest.NewRecorder()
		srv.Echo.ServeHTTP(res, req)

		switch res.Code {
		case http.StatusOK:
		case http.StatusBadRequest:
			var problem struct {
				Status int    `json:"status"`
				Code   string `json:"code"`
			}
			if err := json.Unmarshal(res.Body.Bytes(), &problem); err != nil || problem.Status != 400 || problem.Code == "" {
				t.Fatalf("%q: 400 is no problem document: %s", rawQuery, res.Body)
			}
			return
		default:
			t.Fatalf("%q answered %d: %s", rawQuery, res.Code, res.Body)
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		p := rec.page
		if p == nil {
			t.Fatalf("%q answered 200 without reading a page", rawQuery)
		}
		query, err := url.ParseQuery(rawQuery)
		if err != nil {
			t.Fatalf("%q answered 200 for a query that does not decode", rawQuery)
		}
		for name, want := range map[string]int{"page": p.Number, "page_size": p.Size} {
			given := query[name]
			if len(given) > 1 {
				t.Fatalf("%q: %s given %d times answered 200", rawQuery, name, len(given))
			}
			if len(given) == 1 {
				if n, err := strconv.Atoi(given[0]); err != nil || n != want {
					t.Fatalf("%q: %s %q read as %d", rawQuery, name, given[0], want)
				}
			}
		}
		if _, err := paging.New(&p.Number, &p.Size); err != nil {
			t.Fatalf("%q answered the out-of-range page %+v", rawQuery, *p)
		}
	})
}
