// Package blob stores files in S3-compatible object storage (MinIO in development) through
// minio-go. It streams bodies in and out with bounded memory, presigns URLs for browsers,
// drives multipart uploads whose parts the browser sends itself, and reports storage failures
// as apperr kinds: a missing object or upload is NotFound, a rejected part list is Invalid,
// an unreachable store is Unavailable and anything else is Internal.
package blob

import (
	"context"
	"crypto/md5" // #nosec G501 -- MD5 is the AEP file checksum the API promises, not a security control
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/motionstudio/platform/pkg/apperr"
)

// partSize bounds the memory a streamed upload of unknown length holds: minio-go buffers one
// part of this size at a time.
const partSize = 16 << 20

// hashBufferSize is the fixed buffer used when streaming an object through MD5.
const hashBufferSize = 1 << 20

// pingTimeout bounds the readiness probe so a hung store fails readiness quickly.
const pingTimeout = 3 * time.Second

// Config locates the object store and the bucket a service writes to.
type Config struct {
	// Endpoint is the S3 API's host:port, without a scheme.
	Endpoint string `env:"S3_ENDPOINT" default:"127.0.0.1:9000"`
	// AccessKey is the S3 access key id.
	AccessKey string `env:"S3_ACCESS_KEY" default:"minioadmin"`
	// SecretKey is the S3 secret key.
	SecretKey string `env:"S3_SECRET_KEY" default:"minioadmin"`
	// UseSSL selects https for the S3 API.
	UseSSL bool `env:"S3_USE_SSL" default:"false"`
	// Region is the S3 region used for signing.
	Region string `env:"S3_REGION" default:"us-east-1"`
	// Bucket is the service's bucket; the service fills in its default (content-svc: content).
	Bucket string `env:"S3_BUCKET"`
	// PublicBaseURL is where anonymous clients read the bucket's public objects (a CDN, or the
	// bucket's own URL when its public prefixes are readable by anyone): an object's public URL
	// is PublicBaseURL + "/" + key. Empty is the bucket's path-style URL on Endpoint.
	PublicBaseURL string `env:"S3_PUBLIC_BASE_URL"`
}

// ObjectInfo describes a stored object.
type ObjectInfo struct {
	Key          string
	Size         int64
	ETag         string
	ContentType  string
	LastModified time.Time
}

// Part is one uploaded part of a multipart upload. ETag is given without surrounding quotes.
type Part struct {
	Number int
	ETag   string
	Size   int64
}

// Upload is a multipart upload that was started and neither completed nor aborted.
type Upload struct {
	Key       string
	UploadID  string
	Initiated time.Time
}

// Store reads and writes objects in one bucket. It is safe for concurrent use.
type Store struct {
	client *minio.Client
	core   minio.Core
	bucket string
	region string
	scheme string
	host   string
	public string
}

// New builds a Store for cfg.Bucket without contacting the server; EnsureBucket or Ping do
// that. It returns an Invalid error when the endpoint or bucket is missing or malformed.
func New(cfg Config) (*Store, error) {
	if cfg.Endpoint == "" {
		return nil, apperr.Invalidf("blob: endpoint is required")
	}
	if cfg.Bucket == "" {
		return nil, apperr.Invalidf("blob: bucket is required")
	}
	client, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:        credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure:       cfg.UseSSL,
		Region:       cfg.Region,
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		return nil, apperr.Wrap(fmt.Errorf("blob: client for %s: %w", cfg.Endpoint, err), apperr.Invalid, "", "invalid object storage endpoint")
	}
	endpoint := client.EndpointURL()
	return &Store{
		client: client,
		core:   minio.Core{Client: client},
		bucket: cfg.Bucket,
		region: cfg.Region,
		scheme: endpoint.Scheme,
		host:   endpoint.Host,
		public: strings.TrimSuffix(cfg.PublicBaseURL, "/"),
	}, nil
}

// Bucket is the name of the bucket the store writes to.
func (s *Store) Bucket() string { return s.bucket }

// URL is the canonical path-style URL of the object (scheme://endpoint/bucket/key) that services
// record next to the object's checksum. It is not presigned.
func (s *Store) URL(key string) string {
	u := url.URL{Scheme: s.scheme, Host: s.host, Path: "/" + s.bucket + "/" + key}
	return u.String()
}

// PublicURL is the URL an anonymous client reads a public object at: PublicBaseURL + "/" + key,
// or the canonical URL when no public base is configured.
func (s *Store) PublicURL(key string) string {
	if s.public == "" {
		return s.URL(key)
	}
	return s.public + "/" + (&url.URL{Path: key}).EscapedPath()
}

// KeyOf is the key of an object given its canonical URL (as URL made it); false when the URL
// is not one of this bucket's.
func (s *Store) KeyOf(canonical string) (string, bool) {
	u, err := url.Parse(canonical)
	if err != nil || u.Host != s.host {
		return "", false
	}
	key, ok := strings.CutPrefix(u.Path, "/"+s.bucket+"/")
	return key, ok && key != ""
}

// AllowPublicRead sets the bucket's policy so that anyone may read (GetObject, nothing else)
// the objects under each prefix; other objects stay private. It returns Unavailable when the
// store cannot be reached and Internal for other failures.
func (s *Store) AllowPublicRead(ctx context.Context, prefixes []string) error {
	resources := make([]string, len(prefixes))
	for i, p := range prefixes {
		resources[i] = "arn:aws:s3:::" + s.bucket + "/" + p + "*"
	}
	policy, err := json.Marshal(map[string]any{
		"Version": "2012-10-17",
		"Statement": []map[string]any{{
			"Effect": "Allow", "Principal": map[string]any{"AWS": []string{"*"}},
			"Action": []string{"s3:GetObject"}, "Resource": resources,
		}},
	})
	if err != nil {
		return fmt.Errorf("blob: public read policy: %w", err)
	}
	if err := s.client.SetBucketPolicy(ctx, s.bucket, string(policy)); err != nil {
		return translate(err, "set public read policy of "+s.bucket)
	}
	return nil
}

// EnsureBucket creates the bucket when it does not exist yet. It returns Unavailable when the
// store cannot be reached and Internal for other failures.
func (s *Store) EnsureBucket(ctx context.Context) error {
	exists, err := s.client.BucketExists(ctx, s.bucket)
	if err != nil {
		return translate(err, "check bucket "+s.bucket)
	}
	if exists {
		return nil
	}
	err = s.client.MakeBucket(ctx, s.bucket, minio.MakeBucketOptions{Region: s.region})
	if err != nil {
		if code := minio.ToErrorResponse(err).Code; code == "BucketAlreadyOwnedByYou" || code == "BucketAlreadyExists" {
			return nil
		}
		return translate(err, "create bucket "+s.bucket)
	}
	return nil
}

// Ping checks that the store answers and the bucket exists, within a few seconds. It returns
// Unavailable otherwise.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	exists, err := s.client.BucketExists(ctx, s.bucket)
	if err != nil {
		return apperr.Wrap(fmt.Errorf("blob: ping bucket %s: %w", s.bucket, err), apperr.Unavailable, "storage_unavailable", "object storage is unavailable")
	}
	if !exists {
		return apperr.Wrap(fmt.Errorf("blob: bucket %s does not exist", s.bucket), apperr.Unavailable, "storage_unavailable", "object storage is unavailable")
	}
	return nil
}

// Put streams r into the object at key; size -1 means unknown, in which case the body is sent
// in parts of bounded size. It returns the stored object's info, Invalid for a malformed key,
// Unavailable when the store cannot be reached and Internal for other failures.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) (ObjectInfo, error) {
	_, err := s.client.PutObject(ctx, s.bucket, key, r, size, minio.PutObjectOptions{
		ContentType: contentType,
		PartSize:    partSize,
	})
	if err != nil {
		return ObjectInfo{}, translate(err, "put "+key)
	}
	return s.Stat(ctx, key)
}

// PutHashed is Put that also returns the hex MD5 of the bytes it streamed, computed on the way
// through so the body is never held in memory. It returns the same errors as Put.
func (s *Store) PutHashed(ctx context.Context, key string, r io.Reader, size int64, contentType string) (ObjectInfo, string, error) {
	h := md5.New() // #nosec G401 -- MD5 is the AEP file checksum the API promises (aep_file_md5), not a security control
	// Hiding r behind a TeeReader also keeps minio-go from uploading parts out of order
	// through io.ReaderAt, which would feed the hash in the wrong order.
	info, err := s.Put(ctx, key, io.TeeReader(r, h), size, contentType)
	if err != nil {
		return ObjectInfo{}, "", err
	}
	return info, hex.EncodeToString(h.Sum(nil)), nil
}

// Get opens the object at key for reading; the caller closes the reader. It returns NotFound
// when there is no such object, Unavailable when the store cannot be reached and Internal for
// other failures.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, ObjectInfo, error) {
	body, info, _, err := s.core.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, ObjectInfo{}, translate(err, "get "+key)
	}
	return body, toObjectInfo(info), nil
}

// Stat describes the object at key. It returns NotFound when there is no such object,
// Unavailable when the store cannot be reached and Internal for other failures.
func (s *Store) Stat(ctx context.Context, key string) (ObjectInfo, error) {
	info, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return ObjectInfo{}, translate(err, "stat "+key)
	}
	return toObjectInfo(info), nil
}

// Remove deletes the object at key; removing a missing object succeeds. It returns
// Unavailable when the store cannot be reached and Internal for other failures.
func (s *Store) Remove(ctx context.Context, key string) error {
	if err := s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}); err != nil {
		return translate(err, "remove "+key)
	}
	return nil
}

// PresignGet returns a URL that downloads the object at key without credentials until ttl has
// passed. It returns Invalid for a malformed key or ttl and Internal for other failures.
func (s *Store) PresignGet(ctx context.Context, key string, ttl time.Duration) (string, error) {
	u, err := s.client.PresignedGetObject(ctx, s.bucket, key, ttl, nil)
	if err != nil {
		return "", translate(err, "presign get "+key)
	}
	return u.String(), nil
}

// PresignPut returns a URL that accepts one PUT of the object at key without credentials until
// ttl has passed. It returns Invalid for a malformed key or ttl and Internal for other failures.
func (s *Store) PresignPut(ctx context.Context, key string, ttl time.Duration) (string, error) {
	u, err := s.client.PresignedPutObject(ctx, s.bucket, key, ttl)
	if err != nil {
		return "", translate(err, "presign put "+key)
	}
	return u.String(), nil
}

// MD5 streams the object at key through MD5 with a fixed-size buffer and returns the hex sum
// and the number of bytes read. It returns NotFound when there is no such object, Unavailable
// when the store cannot be reached and Internal for other failures.
func (s *Store) MD5(ctx context.Context, key string) (string, int64, error) {
	body, _, err := s.Get(ctx, key)
	if err != nil {
		return "", 0, err
	}
	defer body.Close()
	h := md5.New() // #nosec G401 -- MD5 is the AEP file checksum the API promises (aep_file_md5), not a security control
	buf := make([]byte, hashBufferSize)
	n, err := io.CopyBuffer(h, onlyReader{body}, buf)
	if err != nil {
		return "", 0, translate(err, "hash "+key)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// onlyReader hides any WriterTo of the wrapped reader so io.CopyBuffer uses the given buffer.
type onlyReader struct{ io.Reader }

func toObjectInfo(info minio.ObjectInfo) ObjectInfo {
	return ObjectInfo{
		Key:          info.Key,
		Size:         info.Size,
		ETag:         trimETag(info.ETag),
		ContentType:  info.ContentType,
		LastModified: info.LastModified,
	}
}
