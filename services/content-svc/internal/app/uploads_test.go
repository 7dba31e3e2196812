package app_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"runtime"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/testkit"
	"github.com/motionstudio/platform/services/content-svc/internal/store"
	"github.com/motionstudio/platform/services/content-svc/internal/upload"
)

// aepSingleLimit is the single-request limit the suite's service runs with.
const aepSingleLimit = 256 << 20

// aepBytes is a fake After Effects project of n bytes: the RIFX header, then a pattern.
func aepBytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/4096)
	}
	copy(b, "RIFX\x00\x00\x00\x00Egg!")
	return b
}

// seedProject inserts a container with one project and returns the project id.
func seedProject() string {
	GinkgoHelper()
	containerID := seedContainer("tpl-" + uuid.NewString()[:8])
	id := uuid.Must(uuid.NewV7()).String()
	Expect(db.Exec(`INSERT INTO projects (id, container_id, name, original_width, original_height, project_duration_sec, choose_mode)
		VALUES (?, ?, 'Landscape', 1920, 1080, 30, 'scenes')`, id, containerID).Error).To(Succeed())
	return id
}

func projectFile(projectID string) (url, sum string, size int64) {
	GinkgoHelper()
	row := db.Raw(`SELECT aep_file_url, aep_file_md5, aep_file_size_bytes FROM projects WHERE id = ?`, projectID).Row()
	Expect(row.Scan(&url, &sum, &size)).To(Succeed())
	return url, sum, size
}

func md5Hex(b []byte) string {
	s := md5.Sum(b)
	return hex.EncodeToString(s[:])
}

var _ = Describe("single-request AEP upload", func() {
	var projectID string

	BeforeEach(func() {
		testkit.Truncate(db)
		projectID = seedProject()
	})

	put := func(token string, file formFile) testkit.Response {
		body, ct := multipartBody(nil, file)
		return client.Do("PUT", "/v1/projects/"+projectID+"/aep", token, body, "Content-Type", ct)
	}

	It("stores the file and records URL, MD5 and size on the project", func() {
		data := aepBytes(3<<20 + 17)
		r := put(adminToken(), formFile{"file", "intro.aep", data})
		Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
		var f map[string]any
		r.JSON(&f)
		Expect(f).To(HaveKeyWithValue("aep_file_md5", md5Hex(data)))
		Expect(f).To(HaveKeyWithValue("aep_file_size_bytes", BeNumerically("==", len(data))))
		url, sum, size := projectFile(projectID)
		Expect(f["aep_file_url"]).To(HavePrefix(url+"?"), "a presigned URL of the stored file")
		Expect(sum).To(Equal(md5Hex(data)))
		Expect(size).To(BeNumerically("==", len(data)))
	})

	It("answers an AEP URL that plain clients download for a while, and the stored URL stays private", func() {
		data := aepBytes(1<<20 + 3)
		Expect(put(adminToken(), formFile{"file", "intro.aep", data}).Status).To(Equal(http.StatusOK))
		var p map[string]any
		client.Do("GET", "/v1/projects/"+projectID, adminToken(), nil).JSON(&p)
		Expect(download(p["aep_file_url"].(string))).To(Equal(data))
		stored, _, _ := projectFile(projectID)
		resp, err := http.Get(stored)
		Expect(err).NotTo(HaveOccurred())
		resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusForbidden))
	})

	It("takes a file named .aep whatever its bytes, or AEP content whatever its name", func() {
		data := []byte("bytes of a project saved by a tool without the RIFX header")
		r := put(adminToken(), formFile{"file", "intro.aep", data})
		Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
		var f map[string]any
		r.JSON(&f)
		Expect(f).To(HaveKeyWithValue("aep_file_md5", md5Hex(data)))
		Expect(put(adminToken(), formFile{"file", "intro.bin", aepBytes(100)}).Status).To(Equal(http.StatusOK))
	})

	It("refuses a file neither named .aep nor AEP, no file, unknown projects and non-administrators", func() {
		Expect(put(adminToken(), formFile{"file", "intro.zip", []byte("PK\x03\x04 a zip, not a project")}).Status).To(Equal(http.StatusUnsupportedMediaType))
		Expect(put(adminToken(), formFile{"other", "intro.aep", aepBytes(100)}).Status).To(Equal(http.StatusBadRequest))
		Expect(put(userToken(), formFile{"file", "intro.aep", aepBytes(100)}).Status).To(Equal(http.StatusForbidden))
		body, ct := multipartBody(nil, formFile{"file", "intro.aep", aepBytes(100)})
		r := client.Do("PUT", "/v1/projects/"+uuid.NewString()+"/aep", adminToken(), body, "Content-Type", ct)
		Expect(r.Status).To(Equal(http.StatusNotFound))
		_, sum, _ := projectFile(projectID)
		Expect(sum).To(BeEmpty())
	})

	// streamUpload PUTs a generated AEP file of n bytes without holding it in memory, and
	// answers the status, the decoded body and the MD5 of what was sent.
	streamUpload := func(n int64) (int, map[string]any, string) {
		GinkgoHelper()
		pr, pw := io.Pipe()
		mw := multipart.NewWriter(pw)
		sent := md5.New()
		go func() {
			part, err := mw.CreateFormFile("file", "big.aep")
			if err == nil {
				w := io.MultiWriter(part, sent)
				chunk := aepBytes(1 << 20)
				for left := n; left > 0 && err == nil; left -= int64(len(chunk)) {
					_, err = w.Write(chunk[:min(int64(len(chunk)), left)])
					copy(chunk, bytes.Repeat([]byte{byte(left)}, 12))
				}
			}
			if err == nil {
				err = mw.Close()
			}
			pw.CloseWithError(err)
		}()
		req, err := http.NewRequest("PUT", baseURL+"/v1/projects/"+projectID+"/aep", pr)
		Expect(err).NotTo(HaveOccurred())
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Authorization", "Bearer "+adminToken())
		resp, err := http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		var body map[string]any
		Expect(json.NewDecoder(resp.Body).Decode(&body)).To(Succeed())
		return resp.StatusCode, body, hex.EncodeToString(sent.Sum(nil))
	}

	It("streams a file far larger than buffering would allow, with bounded memory", func() {
		const size = 192 << 20
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		peak := make(chan uint64, 1)
		stop := make(chan struct{})
		go func() {
			var m runtime.MemStats
			var top uint64
			t := time.NewTicker(5 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stop:
					peak <- top
					return
				case <-t.C:
					runtime.ReadMemStats(&m)
					top = max(top, m.HeapInuse)
				}
			}
		}()
		status, body, sum := streamUpload(size)
		close(stop)
		growth := int64(<-peak) - int64(before.HeapInuse)
		Expect(status).To(Equal(http.StatusOK), fmt.Sprint(body))
		Expect(body).To(HaveKeyWithValue("aep_file_md5", sum))
		Expect(body).To(HaveKeyWithValue("aep_file_size_bytes", BeNumerically("==", size)))
		Expect(growth).To(BeNumerically("<", size/2), "the heap grew by %d MiB for a %d MiB upload", growth>>20, size>>20)
	})

	It("refuses a file over the single-request limit", func() {
		status, body, _ := streamUpload(aepSingleLimit + 1<<20)
		Expect(status).To(Equal(http.StatusRequestEntityTooLarge), fmt.Sprint(body))
		Expect(body).To(HaveKeyWithValue("code", "file_too_large"))
		_, sum, _ := projectFile(projectID)
		Expect(sum).To(BeEmpty())
	})
})

// startedUpload is the answer of start-upload.
type startedUpload struct {
	UploadID       string `json:"upload_id"`
	Bucket         string `json:"bucket"`
	Key            string `json:"key"`
	ChunkSizeBytes int64  `json:"chunk_size_bytes"`
	PartURLs       []struct {
		PartNumber int    `json:"part_number"`
		URL        string `json:"url"`
	} `json:"part_urls"`
}

type completedPart struct {
	PartNumber int    `json:"part_number"`
	ETag       string `json:"etag"`
}

var _ = Describe("multipart AEP upload", func() {
	var projectID string

	BeforeEach(func() {
		testkit.Truncate(db)
		projectID = seedProject()
	})

	start := func(project string, total int) startedUpload {
		GinkgoHelper()
		r := client.Do("POST", "/v1/projects/"+project+"/aep/start-upload", adminToken(),
			map[string]any{"filename": "wedding.aep", "total_size_bytes": total})
		Expect(r.Status).To(Equal(http.StatusCreated), string(r.Body))
		var s startedUpload
		r.JSON(&s)
		return s
	}
	// putParts sends each part with a plain HTTP PUT to its presigned URL and answers the ETags.
	putParts := func(s startedUpload, data []byte) []completedPart {
		GinkgoHelper()
		var parts []completedPart
		for _, p := range s.PartURLs {
			from := int64(p.PartNumber-1) * s.ChunkSizeBytes
			to := min(from+s.ChunkSizeBytes, int64(len(data)))
			req, err := http.NewRequest("PUT", p.URL, bytes.NewReader(data[from:to]))
			Expect(err).NotTo(HaveOccurred())
			resp, err := http.DefaultClient.Do(req)
			Expect(err).NotTo(HaveOccurred())
			resp.Body.Close()
			Expect(resp.StatusCode).To(Equal(http.StatusOK))
			parts = append(parts, completedPart{PartNumber: p.PartNumber, ETag: resp.Header.Get("ETag")})
		}
		return parts
	}
	complete := func(project, uploadID string, parts []completedPart) testkit.Response {
		return client.Do("POST", "/v1/projects/"+project+"/aep/complete-upload", adminToken(),
			map[string]any{"upload_id": uploadID, "parts": parts})
	}

	It("assembles parts PUT straight to storage and records the bytes' MD5", func() {
		data := aepBytes(11<<20 + 5)
		s := start(projectID, len(data))
		Expect(s.ChunkSizeBytes).To(BeNumerically("==", 5<<20))
		Expect(s.PartURLs).To(HaveLen(3))
		Expect(s.Bucket).To(Equal(testkit.BlobConfig("content_app").Bucket))
		parts := putParts(s, data)

		r := complete(projectID, s.UploadID, parts)
		Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
		var f map[string]any
		r.JSON(&f)
		Expect(f).To(HaveKeyWithValue("aep_file_md5", md5Hex(data)))
		Expect(f).To(HaveKeyWithValue("aep_file_size_bytes", BeNumerically("==", len(data))))
		url, sum, size := projectFile(projectID)
		Expect(url).To(HaveSuffix(s.Key))
		Expect(sum).To(Equal(md5Hex(data)))
		Expect(size).To(BeNumerically("==", len(data)))

		Expect(complete(projectID, s.UploadID, parts).Status).To(Equal(http.StatusConflict))
	})

	It("refuses missing, repeated and wrongly tagged parts, then completes with the parts in any order", func() {
		data := aepBytes(11 << 20)
		s := start(projectID, len(data))
		parts := putParts(s, data)

		Expect(complete(projectID, s.UploadID, parts[:2]).Status).To(Equal(http.StatusBadRequest))
		Expect(complete(projectID, s.UploadID, []completedPart{parts[0], parts[2]}).Status).To(Equal(http.StatusBadRequest))
		wrong := append([]completedPart{}, parts...)
		wrong[1].ETag = `"0123456789abcdef0123456789abcdef"`
		r := complete(projectID, s.UploadID, wrong)
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(ContainSubstring("part 2 has the wrong etag"))
		Expect(complete(projectID, s.UploadID, nil).Status).To(Equal(http.StatusBadRequest))
		repeated := []completedPart{parts[0], parts[1], parts[1], parts[2]}
		Expect(complete(projectID, s.UploadID, repeated).Status).To(Equal(http.StatusBadRequest))

		shuffled := []completedPart{parts[2], parts[0], parts[1]}
		r = complete(projectID, s.UploadID, shuffled)
		Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
		_, sum, _ := projectFile(projectID)
		Expect(sum).To(Equal(md5Hex(data)))
	})

	It("refuses to complete before every part was sent", func() {
		data := aepBytes(11 << 20)
		s := start(projectID, len(data))
		firstTwo := s
		firstTwo.PartURLs = s.PartURLs[:2]
		parts := putParts(firstTwo, data)
		parts = append(parts, completedPart{PartNumber: 3, ETag: parts[0].ETag})
		r := complete(projectID, s.UploadID, parts)
		Expect(r.Status).To(Equal(http.StatusBadRequest))
		Expect(string(r.Body)).To(ContainSubstring("part 3 was not uploaded"))
	})

	It("answers 404 for an unknown upload id or one of another project", func() {
		data := aepBytes(6 << 20)
		s := start(projectID, len(data))
		parts := putParts(s, data)
		Expect(complete(projectID, "no-such-upload", parts).Status).To(Equal(http.StatusNotFound))
		other := seedProject()
		Expect(complete(other, s.UploadID, parts).Status).To(Equal(http.StatusNotFound))
		_, sum, _ := projectFile(other)
		Expect(sum).To(BeEmpty())
	})

	It("registers the assembled bytes of a .aep upload without inspecting them", func() {
		data := bytes.Repeat([]byte("no RIFX header "), 600000)
		s := start(projectID, len(data))
		r := complete(projectID, s.UploadID, putParts(s, data))
		Expect(r.Status).To(Equal(http.StatusOK), string(r.Body))
		_, sum, size := projectFile(projectID)
		Expect(sum).To(Equal(md5Hex(data)))
		Expect(size).To(BeNumerically("==", len(data)))
	})

	It("validates the start request", func() {
		for _, body := range []map[string]any{
			{"filename": "wedding.mov", "total_size_bytes": 10 << 20},
			{"filename": "../wedding.aep", "total_size_bytes": 10 << 20},
			{"filename": "wedding.aep", "total_size_bytes": 0},
			{"filename": "wedding.aep", "total_size_bytes": 3_000_000_001},
			{"filename": "wedding.aep"},
		} {
			r := client.Do("POST", "/v1/projects/"+projectID+"/aep/start-upload", adminToken(), body)
			Expect(r.Status).To(Equal(http.StatusBadRequest), "%v", body)
		}
		r := client.Do("POST", "/v1/projects/"+uuid.NewString()+"/aep/start-upload", adminToken(),
			map[string]any{"filename": "wedding.aep", "total_size_bytes": 10 << 20})
		Expect(r.Status).To(Equal(http.StatusNotFound))
		r = client.Do("POST", "/v1/projects/"+projectID+"/aep/start-upload", userToken(),
			map[string]any{"filename": "wedding.aep", "total_size_bytes": 10 << 20})
		Expect(r.Status).To(Equal(http.StatusForbidden))
		r = client.Do("POST", "/v1/projects/"+projectID+"/aep/complete-upload", userToken(),
			map[string]any{"upload_id": "x", "parts": []any{}})
		Expect(r.Status).To(Equal(http.StatusForbidden))
	})

	It("aborts uploads left incomplete longer than the configured age", func() {
		data := aepBytes(6 << 20)
		s := start(projectID, len(data))
		parts := putParts(s, data)

		objects := appObjects()
		sweeper := upload.NewService(upload.Config{MaxAge: 0}, store.NewUploads(db), store.NewUploadObjects(objects), time.Now)
		Eventually(func() (int, error) { return sweeper.Sweep(context.Background()) }).Should(BeNumerically(">=", 1))
		_, err := objects.ListParts(context.Background(), s.Key, s.UploadID)
		Expect(apperr.Is(err, apperr.NotFound)).To(BeTrue(), "%v", err)
		Expect(complete(projectID, s.UploadID, parts).Status).To(Equal(http.StatusConflict))
	})
})

// download GETs url as an anonymous client and answers the bytes; anything but 200 fails.
func download(url string) []byte {
	GinkgoHelper()
	resp, err := http.Get(url)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	Expect(resp.StatusCode).To(Equal(http.StatusOK), string(body))
	return body
}
