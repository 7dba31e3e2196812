package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// upload writes a file of -size bytes that starts like an AEP file (unless it exists with that
// size), uploads it to -project through start-upload, presigned part PUTs and complete-upload,
// and prints the time of each step, the MD5 throughput of the complete call and the peak
// resident memory of -pid (the content-svc process) during it, as shell assignments.
func upload(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("upload", flag.ContinueOnError)
	base := fs.String("base", "http://127.0.0.1:18082", "content-svc base URL")
	tokenFile := fs.String("token-file", "", "file holding an admin token")
	project := fs.String("project", "", "project id")
	size := fs.Int64("size", 1<<30, "file size in bytes")
	path := fs.String("file", "", "the file to upload (written when missing)")
	pid := fs.Int("pid", 0, "content-svc process id, for its peak memory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *tokenFile == "" || *project == "" || *path == "" || *pid == 0 {
		return errors.New("-token-file, -project, -file and -pid are required")
	}
	raw, err := os.ReadFile(*tokenFile)
	if err != nil {
		return fmt.Errorf("read token: %w", err)
	}
	c := client{base: *base, token: strings.TrimSpace(string(raw)), http: &http.Client{Timeout: 10 * time.Minute}}
	if err := writeAEP(*path, *size); err != nil {
		return err
	}
	var started struct {
		UploadID string `json:"upload_id"`
		PartURLs []struct {
			PartNumber int    `json:"part_number"`
			URL        string `json:"url"`
		} `json:"part_urls"`
		ChunkSize int64 `json:"chunk_size_bytes"`
	}
	if err := c.post(ctx, "/v1/projects/"+*project+"/aep/start-upload",
		map[string]any{"filename": "bench.aep", "total_size_bytes": *size}, http.StatusCreated, &started); err != nil {
		return err
	}
	t0 := time.Now()
	etags, err := putParts(ctx, c.http, *path, *size, started.ChunkSize, started.PartURLs)
	if err != nil {
		return err
	}
	putTime := time.Since(t0)
	parts := make([]map[string]any, len(etags))
	for i, e := range etags {
		parts[i] = map[string]any{"part_number": i + 1, "etag": e}
	}
	// Writing 5 to clear_refs resets the process's VmHWM to its current resident set size.
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", *pid), []byte("5"), 0); err != nil {
		return fmt.Errorf("reset peak memory: %w", err)
	}
	rssBefore, err := procKB(*pid, "VmRSS")
	if err != nil {
		return err
	}
	var done struct {
		MD5  string `json:"aep_file_md5"`
		Size int64  `json:"aep_file_size_bytes"`
	}
	t1 := time.Now()
	if err := c.post(ctx, "/v1/projects/"+*project+"/aep/complete-upload",
		map[string]any{"upload_id": started.UploadID, "parts": parts}, http.StatusOK, &done); err != nil {
		return err
	}
	completeTime := time.Since(t1)
	peak, err := procKB(*pid, "VmHWM")
	if err != nil {
		return err
	}
	fmt.Printf("UPLOAD_PARTS=%d\nUPLOAD_PUT_SECONDS=%.2f\nUPLOAD_COMPLETE_SECONDS=%.2f\nUPLOAD_MD5_MBPS=%.0f\n",
		len(etags), putTime.Seconds(), completeTime.Seconds(), float64(*size)/1e6/completeTime.Seconds())
	fmt.Printf("UPLOAD_RSS_BEFORE_MB=%.1f\nUPLOAD_PEAK_RSS_MB=%.1f\nUPLOAD_MD5=%s\nUPLOAD_SIZE=%d\n",
		float64(rssBefore)/1024, float64(peak)/1024, done.MD5, done.Size)
	return nil
}

// writeAEP writes size bytes to path, a RIFX/Egg! header then pseudo-random bytes, unless
// the file already has that size.
func writeAEP(path string, size int64) error {
	if st, err := os.Stat(path); err == nil && st.Size() == size {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	if _, err := w.Write([]byte("RIFX\x00\x00\x00\x00Egg!")); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	rng := rand.NewChaCha8([32]byte{1})
	if _, err := io.CopyN(w, rng, size-12); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// putParts PUTs each part of the file to its presigned URL, four at a time, and answers the
// ETags in part order.
func putParts(ctx context.Context, hc *http.Client, path string, size, chunk int64, urls []struct {
	PartNumber int    `json:"part_number"`
	URL        string `json:"url"`
}) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	etags := make([]string, len(urls))
	errs := make([]error, len(urls))
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i, u := range urls {
		off := int64(u.PartNumber-1) * chunk
		n := min(chunk, size-off)
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			req, err := http.NewRequestWithContext(ctx, http.MethodPut, u.URL, io.NewSectionReader(f, off, n))
			if err != nil {
				errs[i] = err
				return
			}
			req.ContentLength = n
			resp, err := hc.Do(req)
			if err != nil {
				errs[i] = fmt.Errorf("put part %d: %w", u.PartNumber, err)
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				body, _ := io.ReadAll(resp.Body)
				errs[i] = fmt.Errorf("put part %d: %s: %s", u.PartNumber, resp.Status, body)
				return
			}
			etags[i] = resp.Header.Get("ETag")
		})
	}
	wg.Wait()
	return etags, errors.Join(errs...)
}

// procKB reads a kB field of /proc/<pid>/status.
func procKB(pid int, field string) (int64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read process status: %w", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err != nil {
				return 0, fmt.Errorf("parse %s: %w", field, err)
			}
			return kb, nil
		}
	}
	return 0, fmt.Errorf("no %s in process status", field)
}

// client calls content-svc with a bearer token.
type client struct {
	base, token string
	http        *http.Client
}

func (c client) post(ctx context.Context, path string, body any, want int, out any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("post %s: %w", path, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("post %s: %w", path, err)
	}
	if resp.StatusCode != want {
		return fmt.Errorf("post %s: %s: %s", path, resp.Status, answer)
	}
	return json.Unmarshal(answer, out)
}
