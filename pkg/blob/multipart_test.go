package blob_test

import (
	"bytes"
	"context"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/blob"
)

// putPart sends one part the way a browser does: a plain PUT of the bytes to the presigned URL.
// It returns the ETag header of the answer.
func putPart(ctx context.Context, key, uploadID string, number int, body []byte) string {
	link, err := store.PresignPart(ctx, key, uploadID, number, 10*time.Minute)
	Expect(err).NotTo(HaveOccurred())
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, link, bytes.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	resp.Body.Close()
	Expect(resp.StatusCode).To(Equal(http.StatusOK))
	etag := resp.Header.Get("ETag")
	Expect(etag).NotTo(BeEmpty())
	return etag
}

func uploadIDs(ctx context.Context, prefix string) []string {
	uploads, err := store.ListIncompleteUploads(ctx, prefix)
	Expect(err).NotTo(HaveOccurred())
	ids := make([]string, len(uploads))
	for i, u := range uploads {
		ids[i] = u.UploadID
	}
	return ids
}

var _ = Describe("a multipart upload through presigned part URLs", func() {
	It("assembles the parts a browser sent into one object whose MD5 matches the bytes", func(ctx SpecContext) {
		const key = "aep/project.aep"
		chunks := [][]byte{randomBytes(5 << 20), randomBytes(5 << 20), randomBytes(1<<20 + 321)}
		var whole []byte
		for _, c := range chunks {
			whole = append(whole, c...)
		}

		id, err := store.StartMultipart(ctx, key, "application/octet-stream")
		Expect(err).NotTo(HaveOccurred())
		Expect(uploadIDs(ctx, key)).To(ContainElement(id))

		var sent []blob.Part
		for i, c := range chunks {
			etag := putPart(ctx, key, id, i+1, c)
			sent = append(sent, blob.Part{Number: i + 1, ETag: etag, Size: int64(len(c))})
		}

		listed, err := store.ListParts(ctx, key, id)
		Expect(err).NotTo(HaveOccurred())
		Expect(listed).To(HaveLen(3))
		for i, p := range listed {
			Expect(p.Number).To(Equal(sent[i].Number))
			Expect(`"` + p.ETag + `"`).To(Equal(sent[i].ETag))
			Expect(p.Size).To(Equal(sent[i].Size))
		}

		info, err := store.CompleteMultipart(ctx, key, id, sent)
		Expect(err).NotTo(HaveOccurred())
		Expect(info.Key).To(Equal(key))
		Expect(info.Size).To(Equal(int64(len(whole))))
		Expect(info.ContentType).To(Equal("application/octet-stream"))

		sum, size, err := store.MD5(ctx, key)
		Expect(err).NotTo(HaveOccurred())
		Expect(sum).To(Equal(md5Hex(whole)))
		Expect(size).To(Equal(int64(len(whole))))
		Expect(uploadIDs(ctx, key)).NotTo(ContainElement(id))
	})

	It("refuses to complete with an etag that does not match the uploaded part", func(ctx SpecContext) {
		const key = "aep/wrong-etag.aep"
		id, err := store.StartMultipart(ctx, key, "application/octet-stream")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx SpecContext) { _ = store.AbortMultipart(ctx, key, id) })
		putPart(ctx, key, id, 1, randomBytes(1024))

		_, err = store.CompleteMultipart(ctx, key, id, []blob.Part{{Number: 1, ETag: "0123456789abcdef0123456789abcdef"}})
		Expect(apperr.KindOf(err)).To(Equal(apperr.Invalid))
		e, _ := apperr.As(err)
		Expect(e.Message).To(ContainSubstring("etags do not match"))
	})

	It("refuses to complete when a part other than the last is under 5 MiB", func(ctx SpecContext) {
		const key = "aep/small-part.aep"
		id, err := store.StartMultipart(ctx, key, "application/octet-stream")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx SpecContext) { _ = store.AbortMultipart(ctx, key, id) })
		first := putPart(ctx, key, id, 1, randomBytes(1<<20))
		second := putPart(ctx, key, id, 2, randomBytes(1024))

		_, err = store.CompleteMultipart(ctx, key, id, []blob.Part{{Number: 1, ETag: first}, {Number: 2, ETag: second}})
		Expect(apperr.KindOf(err)).To(Equal(apperr.Invalid))
		e, _ := apperr.As(err)
		Expect(e.Message).To(ContainSubstring("at least 5 MiB"))
	})

	It("refuses to complete without parts", func(ctx SpecContext) {
		_, err := store.CompleteMultipart(ctx, "aep/none.aep", "any", nil)
		Expect(apperr.KindOf(err)).To(Equal(apperr.Invalid))
	})

	It("reports an unknown upload id as not found", func(ctx SpecContext) {
		const key = "aep/unknown.aep"
		id, err := store.StartMultipart(ctx, key, "application/octet-stream")
		Expect(err).NotTo(HaveOccurred())
		Expect(store.AbortMultipart(ctx, key, id)).To(Succeed())

		_, err = store.ListParts(ctx, key, id)
		Expect(apperr.KindOf(err)).To(Equal(apperr.NotFound))
		_, err = store.CompleteMultipart(ctx, key, id, []blob.Part{{Number: 1, ETag: "0123456789abcdef0123456789abcdef"}})
		Expect(apperr.KindOf(err)).To(Equal(apperr.NotFound))
		_, err = store.ListParts(ctx, key, "never-started")
		Expect(apperr.KindOf(err)).To(Equal(apperr.NotFound))
	})

	It("aborts an upload that is already gone without complaint", func(ctx SpecContext) {
		const key = "aep/abort-twice.aep"
		id, err := store.StartMultipart(ctx, key, "application/octet-stream")
		Expect(err).NotTo(HaveOccurred())
		Expect(store.AbortMultipart(ctx, key, id)).To(Succeed())
		Expect(store.AbortMultipart(ctx, key, id)).To(Succeed())
	})

	It("forgets an aborted upload", func(ctx SpecContext) {
		const key = "aep/aborted.aep"
		id, err := store.StartMultipart(ctx, key, "application/octet-stream")
		Expect(err).NotTo(HaveOccurred())
		putPart(ctx, key, id, 1, randomBytes(1024))
		Expect(uploadIDs(ctx, key)).To(ContainElement(id))

		Expect(store.AbortMultipart(ctx, key, id)).To(Succeed())
		Expect(uploadIDs(ctx, key)).NotTo(ContainElement(id))
		_, err = store.ListParts(ctx, key, id)
		Expect(apperr.KindOf(err)).To(Equal(apperr.NotFound))
	})

	It("presigns only part numbers S3 accepts", func(ctx SpecContext) {
		_, err := store.PresignPart(ctx, "aep/x.aep", "id", 0, time.Minute)
		Expect(apperr.KindOf(err)).To(Equal(apperr.Invalid))
		_, err = store.PresignPart(ctx, "aep/x.aep", "id", 10001, time.Minute)
		Expect(apperr.KindOf(err)).To(Equal(apperr.Invalid))
	})
})
