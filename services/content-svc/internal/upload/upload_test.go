package upload_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/services/content-svc/internal/upload"
)

var _ = Describe("choosing the part size", func() {
	svc := func(part int64) *upload.Service {
		return upload.NewService(upload.Config{PartSizeBytes: part}, nil, nil, time.Now)
	}

	It("uses the configured size while the file needs at most 1,000 parts", func() {
		Expect(svc(64 << 20).PartSize(3_000_000_000)).To(BeNumerically("==", 64<<20))
		Expect(svc(5 << 20).PartSize(300_000_000)).To(BeNumerically("==", 5<<20))
	})

	It("doubles it for files that would need more parts", func() {
		size := svc(1 << 20).PartSize(3_000_000_000)
		Expect(size).To(BeNumerically(">=", 5<<20))
		Expect((3_000_000_000 + size - 1) / size).To(BeNumerically("<=", 1000))
	})

	It("never goes under S3's 5 MiB minimum", func() {
		Expect(svc(1024).PartSize(10 << 20)).To(BeNumerically("==", 5<<20))
	})
})

var _ = Describe("recognising an After Effects project", func() {
	It("needs the RIFX container of form Egg!", func() {
		Expect(upload.IsAEP([]byte("RIFX\x00\x01\x02\x03Egg!more"))).To(BeTrue())
		Expect(upload.IsAEP([]byte("RIFF\x00\x01\x02\x03WEBPmore"))).To(BeFalse())
		Expect(upload.IsAEP([]byte("RIFX"))).To(BeFalse())
	})
})
