package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// purge empties the bench bucket (objects and unfinished multipart uploads) and removes it, so
// that the uploaded gigabyte does not stay on disk. A missing bucket is not an error.
func purge(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("purge", flag.ContinueOnError)
	endpoint := fs.String("endpoint", "127.0.0.1:9000", "MinIO endpoint")
	access := fs.String("access-key", "minioadmin", "access key")
	secret := fs.String("secret-key", "minioadmin", "secret key")
	bucket := fs.String("bucket", "", "the bench bucket")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *bucket == "" {
		return errors.New("-bucket is required")
	}
	mc, err := minio.New(*endpoint, &minio.Options{Creds: credentials.NewStaticV4(*access, *secret, "")})
	if err != nil {
		return fmt.Errorf("minio client: %w", err)
	}
	ok, err := mc.BucketExists(ctx, *bucket)
	if err != nil || !ok {
		return err
	}
	for obj := range mc.ListObjects(ctx, *bucket, minio.ListObjectsOptions{Recursive: true}) {
		if obj.Err != nil {
			return fmt.Errorf("list %s: %w", *bucket, obj.Err)
		}
		if err := mc.RemoveObject(ctx, *bucket, obj.Key, minio.RemoveObjectOptions{}); err != nil {
			return fmt.Errorf("remove %s: %w", obj.Key, err)
		}
	}
	for up := range mc.ListIncompleteUploads(ctx, *bucket, "", true) {
		if up.Err != nil {
			return fmt.Errorf("list uploads of %s: %w", *bucket, up.Err)
		}
		if err := mc.RemoveIncompleteUpload(ctx, *bucket, up.Key); err != nil {
			return fmt.Errorf("abort upload of %s: %w", up.Key, err)
		}
	}
	if err := mc.RemoveBucket(ctx, *bucket); err != nil {
		return fmt.Errorf("remove bucket %s: %w", *bucket, err)
	}
	return nil
}
