package blob_test

import (
	"bytes"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/blob"
	"github.com/motionstudio/platform/pkg/testkit"
)

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, err := rand.Read(b)
	Expect(err).NotTo(HaveOccurred())
	return b
}

func md5Hex(b []byte) string {
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}

var _ = Describe("storing objects", func() {
	It("stores a body and reads it back with its content type", func(ctx SpecContext) {
		body := []byte(`{"hello":"world"}`)
		info, err := store.Put(ctx, "docs/hello.json", bytes.NewReader(body), int64(len(body)), "application/json")
		Expect(err).NotTo(HaveOccurred())
		Expect(info.Key).To(Equal("docs/hello.json"))
		Expect(info.Size).To(Equal(int64(len(body))))
		Expect(info.ContentType).To(Equal("application/json"))
		Expect(info.LastModified).To(BeTemporally("~", time.Now(), time.Minute))

		r, got, err := store.Get(ctx, "docs/hello.json")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(r.Close)
		Expect(io.ReadAll(r)).To(Equal(body))
		Expect(got.Size).To(Equal(int64(len(body))))
		Expect(got.ContentType).To(Equal("application/json"))
	})

	It("streams a body of unknown length", func(ctx SpecContext) {
		body := randomBytes(3<<20 + 17)
		info, err := store.Put(ctx, "unknown-length.bin", io.MultiReader(bytes.NewReader(body)), -1, "application/octet-stream")
		Expect(err).NotTo(HaveOccurred())
		Expect(info.Size).To(Equal(int64(len(body))))
		sum, size, err := store.MD5(ctx, "unknown-length.bin")
		Expect(err).NotTo(HaveOccurred())
		Expect(size).To(Equal(int64(len(body))))
		Expect(sum).To(Equal(md5Hex(body)))
	})

	DescribeTable("PutHashed returns the MD5 and size of what it streamed",
		func(ctx SpecContext, n int, knownSize bool) {
			body := randomBytes(n)
			size := int64(-1)
			if knownSize {
				size = int64(n)
			}
			key := "hashed/" + CurrentSpecReport().LeafNodeText
			info, sum, err := store.PutHashed(ctx, key, io.MultiReader(bytes.NewReader(body)), size, "application/octet-stream")
			Expect(err).NotTo(HaveOccurred())
			Expect(sum).To(Equal(md5Hex(body)))
			Expect(info.Size).To(Equal(int64(n)))

			stored, storedSize, err := store.MD5(ctx, key)
			Expect(err).NotTo(HaveOccurred())
			Expect(stored).To(Equal(sum))
			Expect(storedSize).To(Equal(int64(n)))
		},
		Entry("small body of known size", 64<<10, true),
		Entry("body larger than one part, known size", 20<<20+5, true),
		Entry("body larger than one part, unknown size", 20<<20+5, false),
		Entry("empty body", 0, true),
	)

	It("hands out a presigned URL that downloads the object without credentials", func(ctx SpecContext) {
		body := randomBytes(1000)
		_, err := store.Put(ctx, "shared/file name.bin", bytes.NewReader(body), int64(len(body)), "application/octet-stream")
		Expect(err).NotTo(HaveOccurred())

		link, err := store.PresignGet(ctx, "shared/file name.bin", 5*time.Minute)
		Expect(err).NotTo(HaveOccurred())
		resp, err := http.Get(link)
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
		Expect(io.ReadAll(resp.Body)).To(Equal(body))
	})

	It("hands out a presigned URL that accepts one upload", func(ctx SpecContext) {
		body := randomBytes(2048)
		link, err := store.PresignPut(ctx, "uploads/direct.bin", 5*time.Minute)
		Expect(err).NotTo(HaveOccurred())
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, link, bytes.NewReader(body))
		Expect(err).NotTo(HaveOccurred())
		resp, err := http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusOK))

		sum, size, err := store.MD5(ctx, "uploads/direct.bin")
		Expect(err).NotTo(HaveOccurred())
		Expect(sum).To(Equal(md5Hex(body)))
		Expect(size).To(Equal(int64(len(body))))
	})

	It("reports a missing object as not found", func(ctx SpecContext) {
		_, err := store.Stat(ctx, "missing/object")
		Expect(apperr.KindOf(err)).To(Equal(apperr.NotFound))
		_, _, err = store.Get(ctx, "missing/object")
		Expect(apperr.KindOf(err)).To(Equal(apperr.NotFound))
		_, _, err = store.MD5(ctx, "missing/object")
		Expect(apperr.KindOf(err)).To(Equal(apperr.NotFound))
	})

	It("removes an object", func(ctx SpecContext) {
		_, err := store.Put(ctx, "to-remove", strings.NewReader("x"), 1, "text/plain")
		Expect(err).NotTo(HaveOccurred())
		Expect(store.Remove(ctx, "to-remove")).To(Succeed())
		_, err = store.Stat(ctx, "to-remove")
		Expect(apperr.KindOf(err)).To(Equal(apperr.NotFound))
	})

	It("names an object by a path-style URL", func() {
		Expect(store.URL("aep/a b.aep")).To(Equal("http://" + testkit.BlobConfig("blob").Endpoint + "/" + store.Bucket() + "/aep/a%20b.aep"))
	})
})

var _ = Describe("the bucket", func() {
	It("is ready and can be ensured again", func(ctx SpecContext) {
		Expect(store.Ping(ctx)).To(Succeed())
		Expect(store.EnsureBucket(ctx)).To(Succeed())
	})

	It("is created by EnsureBucket when missing, and Ping fails until then", func(ctx SpecContext) {
		cfg := testkit.BlobConfig("blob")
		cfg.Bucket += "-ensure"
		other, err := blob.New(cfg)
		Expect(err).NotTo(HaveOccurred())
		Expect(apperr.KindOf(other.Ping(ctx))).To(Equal(apperr.Unavailable))

		Expect(other.EnsureBucket(ctx)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(testkit.RemoveBucket(ctx, cfg)).To(Succeed())
		})
		Expect(other.Ping(ctx)).To(Succeed())
	})

	It("must be named", func() {
		cfg := testkit.BlobConfig("blob")
		cfg.Bucket = ""
		_, err := blob.New(cfg)
		Expect(apperr.KindOf(err)).To(Equal(apperr.Invalid))
	})
})
