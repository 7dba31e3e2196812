package testkit

import (
	"context"
	"regexp"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/blob"
	"github.com/motionstudio/platform/pkg/config"
)

var invalidBucketChars = regexp.MustCompile(`[^a-z0-9-]+`)

// BlobConfig is the object storage configuration a service under test gets: S3_* variables
// (default the local MinIO with minioadmin credentials) and the bucket "t-<scope>", lower-cased
// with every character S3 refuses turned into "-".
func BlobConfig(suite string) blob.Config {
	var cfg blob.Config
	gomega.Expect(config.Load(&cfg)).To(gomega.Succeed(), "S3_* environment")
	name := "t-" + invalidBucketChars.ReplaceAllString(strings.ToLower(Scope(suite)), "-")
	name = strings.TrimRight(name[:min(len(name), 63)], "-")
	gomega.Expect(s3utils.CheckValidBucketNameStrict(name)).To(gomega.Succeed(), "bucket name %q", name)
	cfg.Bucket = name
	return cfg
}

// Blob returns a store on an empty bucket of its own (see BlobConfig), removing whatever an
// earlier run left in it. When the suite ends every object and incomplete upload in the bucket
// is removed and the bucket deleted. It fails the suite when MinIO is unreachable.
func Blob(suite string) *blob.Store {
	cfg := BlobConfig(suite)
	admin, err := adminClient(cfg)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	exists, err := admin.BucketExists(ctx, cfg.Bucket)
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "minio must be reachable at %s (run scripts/infra.sh up)", cfg.Endpoint)
	if exists {
		gomega.Expect(dropBucket(ctx, admin, cfg.Bucket)).To(gomega.Succeed())
	}
	gomega.Expect(admin.MakeBucket(ctx, cfg.Bucket, minio.MakeBucketOptions{Region: cfg.Region})).To(gomega.Succeed())

	store, err := blob.New(cfg)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ginkgo.DeferCleanup(func(ctx ginkgo.SpecContext) {
		gomega.Expect(dropBucket(ctx, admin, cfg.Bucket)).To(gomega.Succeed())
	}, ginkgo.NodeTimeout(time.Minute))
	return store
}

// RemoveBucket empties cfg.Bucket of objects and incomplete uploads and deletes it, for specs
// that create buckets of their own; a missing bucket is not an error.
func RemoveBucket(ctx context.Context, cfg blob.Config) error {
	admin, err := adminClient(cfg)
	if err != nil {
		return err
	}
	exists, err := admin.BucketExists(ctx, cfg.Bucket)
	if err != nil || !exists {
		return err
	}
	return dropBucket(ctx, admin, cfg.Bucket)
}

func adminClient(cfg blob.Config) (*minio.Client, error) {
	return minio.New(cfg.Endpoint, &minio.Options{
		Creds:  credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure: cfg.UseSSL,
		Region: cfg.Region,
	})
}

// dropBucket removes the bucket's objects and incomplete uploads, then the bucket itself.
func dropBucket(ctx context.Context, admin *minio.Client, bucket string) error {
	objects := admin.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true, WithVersions: true})
	for rerr := range admin.RemoveObjects(ctx, bucket, objects, minio.RemoveObjectsOptions{}) {
		if rerr.Err != nil {
			return rerr.Err
		}
	}
	core := minio.Core{Client: admin}
	for u := range admin.ListIncompleteUploads(ctx, bucket, "", true) {
		if u.Err != nil {
			return u.Err
		}
		if err := core.AbortMultipartUpload(ctx, bucket, u.Key, u.UploadID); err != nil {
			return err
		}
	}
	// MinIO lists incomplete uploads only by exact key, so some may remain; its force delete
	// removes them with the bucket.
	return admin.RemoveBucketWithOptions(ctx, bucket, minio.RemoveBucketOptions{ForceDelete: true})
}
