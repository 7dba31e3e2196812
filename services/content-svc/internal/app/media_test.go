package app_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"mime/multipart"
	"net/http"
	"strings"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/image/font/gofont/goregular"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/blob"
	"github.com/motionstudio/platform/pkg/testkit"
)

// formFile is one file part of a multipart form.
type formFile struct {
	field, name string
	data        []byte
}

// multipartBody encodes fields and files as multipart/form-data and returns the body and
// its content type.
func multipartBody(fields map[string]string, files ...formFile) ([]byte, string) {
	GinkgoHelper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		Expect(w.WriteField(k, v)).To(Succeed())
	}
	for _, f := range files {
		part, err := w.CreateFormFile(f.field, f.name)
		Expect(err).NotTo(HaveOccurred())
		_, err = part.Write(f.data)
		Expect(err).NotTo(HaveOccurred())
	}
	Expect(w.Close()).To(Succeed())
	return buf.Bytes(), w.FormDataContentType()
}

// appObjects is the app's own bucket, for checking what it stored.
func appObjects() *blob.Store {
	GinkgoHelper()
	s, err := blob.New(testkit.BlobConfig("content_app"))
	Expect(err).NotTo(HaveOccurred())
	return s
}

func adminToken() string { return tokens.UserToken(uuid.NewString(), uuid.NewString(), true) }
func userToken() string  { return tokens.UserToken(uuid.NewString(), uuid.NewString(), false) }

// ttfBytes is a real TrueType font (Go Regular).
var ttfBytes = goregular.TTF

// woffOf wraps a TrueType font into a WOFF 1.0 file whose tables are stored uncompressed.
func woffOf(ttf []byte) []byte {
	be := binary.BigEndian
	numTables := int(be.Uint16(ttf[4:]))
	dirEnd := 44 + 20*numTables
	var tables bytes.Buffer
	dir := make([]byte, 20*numTables)
	for i := range numTables {
		rec := ttf[12+16*i:]
		offset, length := be.Uint32(rec[8:]), be.Uint32(rec[12:])
		e := dir[20*i:]
		copy(e[0:4], rec[0:4])
		be.PutUint32(e[4:], uint32(dirEnd+tables.Len()))
		be.PutUint32(e[8:], length)
		be.PutUint32(e[12:], length)
		copy(e[16:20], rec[4:8])
		tables.Write(ttf[offset : offset+length])
		for tables.Len()%4 != 0 {
			tables.WriteByte(0)
		}
	}
	header := make([]byte, 44)
	copy(header, "wOFF")
	copy(header[4:], ttf[0:4])
	be.PutUint32(header[8:], uint32(dirEnd+tables.Len()))
	be.PutUint16(header[12:], uint16(numTables))
	be.PutUint32(header[16:], uint32(len(ttf)))
	return append(append(header, dir...), tables.Bytes()...)
}

// woff2Shaped is a file with a consistent WOFF2 header and n bytes of compressed data.
func woff2Shaped(n int) []byte {
	be := binary.BigEndian
	data := make([]byte, 48+n)
	copy(data, "wOF2")
	copy(data[4:], []byte{0, 1, 0, 0})
	be.PutUint32(data[8:], uint32(len(data)))
	be.PutUint16(data[12:], 1)
	be.PutUint32(data[16:], uint32(4*n))
	be.PutUint32(data[20:], uint32(n))
	return data
}

var _ = Describe("fonts", func() {
	BeforeEach(func() { testkit.Truncate(db) })

	upload := func(token string, fields map[string]string, file formFile) testkit.Response {
		body, ct := multipartBody(fields, file)
		return client.Do("POST", "/v1/fonts", token, body, "Content-Type", ct)
	}

	It("stores each accepted font type, lists them and deletes them with their files", func() {
		kinds := map[string][]byte{
			"ttf": ttfBytes, "woff": woffOf(ttfBytes), "woff2": woff2Shaped(500),
		}
		ids := map[string]string{}
		for format, data := range kinds {
			r := upload(adminToken(), map[string]string{"name": "Vazir " + format, "family": "Vazir", "direction": "rtl", "is_premium": "true"},
				formFile{"file", "font.bin", data})
			Expect(r.Status).To(Equal(http.StatusCreated), string(r.Body))
			var f map[string]any
			r.JSON(&f)
			Expect(f).To(HaveKeyWithValue("format", format))
			Expect(f).To(HaveKeyWithValue("direction", "rtl"))
			Expect(f).To(HaveKeyWithValue("is_premium", true))
			Expect(f).To(HaveKeyWithValue("size_bytes", BeNumerically("==", len(data))))
			ids[format] = f["id"].(string)
			Expect(download(f["url"].(string))).To(Equal(data), "a browser loads the font from its URL")
		}
		r := client.Do("GET", "/v1/fonts", userToken(), nil)
		Expect(r.Status).To(Equal(http.StatusOK))
		var list struct{ Data []map[string]any }
		r.JSON(&list)
		Expect(list.Data).To(HaveLen(3))

		objects := appObjects()
		key := "fonts/" + ids["ttf"] + ".ttf"
		rc, info, err := objects.Get(context.Background(), key)
		Expect(err).NotTo(HaveOccurred())
		rc.Close()
		Expect(info.Size).To(BeNumerically("==", len(ttfBytes)))

		Expect(client.Do("DELETE", "/v1/fonts/"+ids["ttf"], adminToken(), nil).Status).To(Equal(http.StatusNoContent))
		_, err = objects.Stat(context.Background(), key)
		Expect(apperr.Is(err, apperr.NotFound)).To(BeTrue())
		Expect(client.Do("DELETE", "/v1/fonts/"+ids["ttf"], adminToken(), nil).Status).To(Equal(http.StatusNotFound))
		r = client.Do("GET", "/v1/fonts", userToken(), nil)
		r.JSON(&list)
		Expect(list.Data).To(HaveLen(2))
	})

	It("accepts only files that parse as fonts, whatever their name says", func() {
		php := []byte("<?php system($_GET['c']); ?>")
		for name, data := range map[string][]byte{
			"shell.woff2": php, "empty.ttf": {}, "font.ttf": append([]byte{0, 1, 0, 0}, make([]byte, 2000)...),
			"font.otf": []byte("OTTO-rest-of-font"), "font.woff": []byte("wOFF-rest"), "font.woff2": []byte("wOF2-rest"),
			"cut.ttf": ttfBytes[:len(ttfBytes)/3], "cut.woff": woffOf(ttfBytes)[:2000],
		} {
			r := upload(adminToken(), map[string]string{"name": "Fake", "family": "Fake"}, formFile{"file", name, data})
			Expect(r.Status).To(Equal(http.StatusUnsupportedMediaType), name)
		}
		var n int64
		Expect(db.Raw("SELECT count(*) FROM fonts").Scan(&n).Error).To(Succeed())
		Expect(n).To(BeZero())
	})

	It("refuses other kinds of files, whatever their name", func() {
		png := []byte("\x89PNG\r\n\x1a\n not a font")
		r := upload(adminToken(), map[string]string{"name": "Fake", "family": "Fake"}, formFile{"file", "fake.ttf", png})
		Expect(r.Status).To(Equal(http.StatusUnsupportedMediaType))
		r = upload(adminToken(), map[string]string{"name": "Fake", "family": "Fake"}, formFile{"file", "fake.otf", []byte("%PDF-1.7 a document")})
		Expect(r.Status).To(Equal(http.StatusUnsupportedMediaType))
		r = upload(adminToken(), map[string]string{"name": "Fake", "family": "Fake"}, formFile{"file", "font.bin", []byte("unknown bytes")})
		Expect(r.Status).To(Equal(http.StatusUnsupportedMediaType))
		var n int64
		Expect(db.Raw("SELECT count(*) FROM fonts").Scan(&n).Error).To(Succeed())
		Expect(n).To(BeZero())

		r = upload(adminToken(), map[string]string{"name": "Sketch", "family": "Sketch"}, formFile{"file", "Sketch.WOFF2", []byte("font bytes a tool wrote without a header")})
		Expect(r.Status).To(Equal(http.StatusUnsupportedMediaType))
	})

	It("refuses missing fields, a bad direction and a missing file", func() {
		r := upload(adminToken(), map[string]string{"family": "Vazir"}, formFile{"file", "a.ttf", ttfBytes})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		r = upload(adminToken(), map[string]string{"name": "A", "family": "B", "direction": "up"}, formFile{"file", "a.ttf", ttfBytes})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		body, ct := multipartBody(map[string]string{"name": "A", "family": "B"})
		Expect(client.Do("POST", "/v1/fonts", adminToken(), body, "Content-Type", ct).Status).To(Equal(http.StatusBadRequest))
	})

	It("refuses a file over the 20 MiB limit", func() {
		big := append([]byte{0, 1, 0, 0}, make([]byte, 21<<20)...)
		r := upload(adminToken(), map[string]string{"name": "Big", "family": "Big"}, formFile{"file", "big.ttf", big})
		Expect(r.Status).To(Equal(http.StatusRequestEntityTooLarge))
	})

	It("lets only administrators upload and delete", func() {
		r := upload(userToken(), map[string]string{"name": "A", "family": "B"}, formFile{"file", "a.ttf", ttfBytes})
		Expect(r.Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("DELETE", "/v1/fonts/"+uuid.NewString(), userToken(), nil).Status).To(Equal(http.StatusForbidden))
		Expect(client.Do("GET", "/v1/fonts", "", nil).Status).To(Equal(http.StatusUnauthorized))
		Expect(client.Do("GET", "/v1/fonts", tokens.ServiceToken("render"), nil).Status).To(Equal(http.StatusOK))
	})
})

var _ = Describe("music", func() {
	BeforeEach(func() { testkit.Truncate(db) })

	create := func(title, artist, genre, mood string, dur float64) {
		GinkgoHelper()
		r := client.Do("POST", "/v1/music", adminToken(), map[string]any{
			"title": title, "artist": artist, "genre": genre, "mood": mood, "duration_sec": dur,
			"audio_url": "https://cdn.example.com/" + strings.ReplaceAll(title, " ", "-") + ".mp3",
		})
		Expect(r.Status).To(Equal(http.StatusCreated), string(r.Body))
	}
	list := func(query string) (titles []string, meta map[string]any) {
		GinkgoHelper()
		r := client.Do("GET", "/v1/music"+query, userToken(), nil)
		Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
		var body struct {
			Data []map[string]any
			Meta map[string]any
		}
		r.JSON(&body)
		for _, t := range body.Data {
			titles = append(titles, t["title"].(string))
		}
		return titles, body.Meta
	}

	BeforeEach(func() {
		create("Sunrise Drive", "Nova", "Pop", "Happy", 120)
		create("Night Drive", "Nova", "Electronic", "Calm", 200)
		create("Epic Trailer", "Hans", "Cinematic", "Epic", 95.5)
		create("Calm Waters", "Lina", "Ambient", "Calm", 300)
	})

	It("lists by title with paging metadata", func() {
		titles, meta := list("?page_size=3")
		Expect(titles).To(Equal([]string{"Calm Waters", "Epic Trailer", "Night Drive"}))
		Expect(meta).To(Equal(map[string]any{"page": 1.0, "page_size": 3.0, "total": 4.0, "has_more": true}))
		titles, meta = list("?page_size=3&page=2")
		Expect(titles).To(Equal([]string{"Sunrise Drive"}))
		Expect(meta).To(HaveKeyWithValue("has_more", false))
	})

	It("filters by partial words, genre, mood and duration", func() {
		titles := func(query string) []string {
			GinkgoHelper()
			t, _ := list(query)
			return t
		}
		Expect(titles("?q=driv")).To(Equal([]string{"Night Drive", "Sunrise Drive"}))
		Expect(titles("?q=NOVA&mood=calm")).To(Equal([]string{"Night Drive"}))
		Expect(titles("?genre=cinematic")).To(Equal([]string{"Epic Trailer"}))
		Expect(titles("?min_duration=100&max_duration=200")).To(Equal([]string{"Night Drive", "Sunrise Drive"}))
		Expect(titles("?min_duration=95.5&max_duration=95.5")).To(Equal([]string{"Epic Trailer"}))
		none, meta := list("?q=100%25")
		Expect(none).To(BeEmpty())
		Expect(meta).To(HaveKeyWithValue("total", 0.0))
	})

	It("refuses bad paging, a duration that is not a finite number and a reversed duration range", func() {
		Expect(client.Do("GET", "/v1/music?page_size=101", userToken(), nil).Status).To(Equal(http.StatusBadRequest))
		Expect(client.Do("GET", "/v1/music?page=0", userToken(), nil).Status).To(Equal(http.StatusBadRequest))
		Expect(client.Do("GET", "/v1/music?min_duration=10&max_duration=5", userToken(), nil).Status).To(Equal(http.StatusBadRequest))
		for _, q := range []string{"min_duration=NaN", "max_duration=Inf", "min_duration=-Inf", "max_duration=1e400"} {
			r := client.Do("GET", "/v1/music?"+q, userToken(), nil)
			Expect(r.Status).To(Equal(http.StatusBadRequest), q)
			Expect(string(r.Body)).To(ContainSubstring("duration"), q)
		}
	})

	It("validates new tracks and lets only administrators add them", func() {
		r := client.Do("POST", "/v1/music", adminToken(), map[string]any{"title": "X", "duration_sec": 10, "audio_url": "ftp://x"})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		r = client.Do("POST", "/v1/music", adminToken(), map[string]any{"title": "X", "duration_sec": 0, "audio_url": "https://x.example/a.mp3"})
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		r = client.Do("POST", "/v1/music", userToken(), map[string]any{"title": "X", "duration_sec": 10, "audio_url": "https://x.example/a.mp3"})
		Expect(r.Status).To(Equal(http.StatusForbidden))
		titles, _ := list("")
		Expect(titles).To(HaveLen(4))
	})
})
