package s3

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/fsbench/fsbench/pkg/object"
	"github.com/fsbench/fsbench/pkg/object/internal/driver"
)

var _ object.Versioner = (*s3Store)(nil)

// notSupported says which S3 error codes mean the store has no
// versioning at all.
func notSupported(err error) bool {
	return isAPICode(err, "NotImplemented") || isAPICode(err, "XNotImplemented")
}

func (s *s3Store) EnableVersioning(ctx context.Context) error {
	_, err := s.client.PutBucketVersioning(ctx, &awss3.PutBucketVersioningInput{
		Bucket:                  aws.String(s.bucket),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled},
	})
	if err != nil && notSupported(err) {
		return driver.OpErr("enable versioning", s.bucket, driver.WrapKind(object.ErrNotSupported, err, "%s does not keep versions: %s", s.display, innermost(err)))
	}
	return s.err("enable versioning", s.bucket, err)
}

func (s *s3Store) VersioningEnabled(ctx context.Context) (bool, error) {
	out, err := s.client.GetBucketVersioning(ctx, &awss3.GetBucketVersioningInput{Bucket: aws.String(s.bucket)})
	if err != nil {
		if notSupported(err) {
			return false, nil
		}
		return false, s.err("get versioning", s.bucket, err)
	}
	return out.Status == types.BucketVersioningStatusEnabled, nil
}

func (s *s3Store) PutVersion(ctx context.Context, key string, data io.ReadSeeker) (string, error) {
	n, err := driver.Size(data)
	if err != nil {
		return "", driver.OpErr("put", key, err)
	}
	out, err := s.client.PutObject(ctx, &awss3.PutObjectInput{
		Bucket: aws.String(s.bucket), Key: aws.String(key), Body: data,
		ContentLength: aws.Int64(n), StorageClass: s.storageClass,
	}, s.bodyOpts)
	if err != nil {
		return "", s.err("put", key, err)
	}
	id := aws.ToString(out.VersionId)
	if id == "" || id == "null" {
		return "", driver.OpErr("put", key, driver.WrapKind(object.ErrNotSupported, nil, "no version ID returned: versioning is off on bucket %s", s.bucket))
	}
	return id, nil
}

func (s *s3Store) GetVersion(ctx context.Context, key, id string, off, limit int64) (io.ReadCloser, error) {
	in := &awss3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key), VersionId: aws.String(id)}
	if off > 0 || limit > 0 {
		r := fmt.Sprintf("bytes=%d-", off)
		if limit > 0 {
			r += fmt.Sprint(off + limit - 1)
		}
		in.Range = aws.String(r)
	}
	out, err := s.client.GetObject(ctx, in)
	if err != nil {
		return nil, s.versionErr("get", key, id, err)
	}
	return &s3Body{ReadCloser: out.Body, s: s, key: key}, nil
}

func (s *s3Store) HeadVersion(ctx context.Context, key, id string) (object.Version, error) {
	out, err := s.client.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key), VersionId: aws.String(id)})
	if err != nil {
		return object.Version{}, s.versionErr("head", key, id, err)
	}
	o := object.Object{Key: key, Size: aws.ToInt64(out.ContentLength), Mtime: aws.ToTime(out.LastModified), StorageClass: string(out.StorageClass)}
	return object.Version{Object: o, ID: aws.ToString(out.VersionId), DeleteMarker: aws.ToBool(out.DeleteMarker)}, nil
}

func (s *s3Store) DeleteVersion(ctx context.Context, key, id string) error {
	_, err := s.client.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key), VersionId: aws.String(id)})
	if err != nil && (isAPICode(err, "NoSuchKey") || isAPICode(err, "NoSuchVersion")) {
		return nil
	}
	return s.versionErr("delete", key, id, err)
}

// versionErr is err for one version: the key is named with its version,
// and a missing version matches object.ErrNotExist.
func (s *s3Store) versionErr(op, key, id string, err error) error {
	if err == nil {
		return nil
	}
	kv := key + "?versionId=" + id
	if isAPICode(err, "NoSuchVersion") {
		return driver.OpErr(op, kv, driver.WrapKind(object.ErrNotExist, err, "NoSuchVersion: no such version"))
	}
	return s.err(op, kv, err)
}

func (s *s3Store) ListVersions(ctx context.Context, opt object.VersionListOptions) (*object.VersionPage, error) {
	limit := opt.Limit
	if limit <= 0 || limit > object.DefaultListLimit {
		limit = object.DefaultListLimit
	}
	in := &awss3.ListObjectVersionsInput{Bucket: aws.String(s.bucket), MaxKeys: aws.Int32(int32(limit)),
		Prefix: aws.String(opt.Prefix), EncodingType: types.EncodingTypeUrl}
	if opt.KeyMarker != "" {
		in.KeyMarker = aws.String(opt.KeyMarker)
		in.VersionIdMarker = aws.String(opt.VersionMarker)
	}
	out, err := s.client.ListObjectVersions(ctx, in)
	if err != nil {
		return nil, s.err("list versions", opt.Prefix, err)
	}
	page := &object.VersionPage{Truncated: aws.ToBool(out.IsTruncated), NextVersion: aws.ToString(out.NextVersionIdMarker)}
	decode := func(k *string) (string, error) {
		if out.EncodingType != types.EncodingTypeUrl {
			return aws.ToString(k), nil
		}
		d, err := url.QueryUnescape(aws.ToString(k))
		if err != nil {
			return "", driver.OpErr("list versions", opt.Prefix, fmt.Errorf("bad key encoding %q: %w", aws.ToString(k), err))
		}
		return d, nil
	}
	if page.NextKey, err = decode(out.NextKeyMarker); err != nil {
		return nil, err
	}
	return page, s.addVersions(page, out, decode)
}

// addVersions puts the versions and delete markers of out into page, in
// the store's order of keys, newest first within a key.
func (s *s3Store) addVersions(page *object.VersionPage, out *awss3.ListObjectVersionsOutput, decode func(*string) (string, error)) error {
	for _, v := range out.Versions {
		k, err := decode(v.Key)
		if err != nil {
			return err
		}
		page.Versions = append(page.Versions, object.Version{
			Object: object.Object{Key: k, Size: aws.ToInt64(v.Size), Mtime: aws.ToTime(v.LastModified), StorageClass: string(v.StorageClass)},
			ID:     aws.ToString(v.VersionId), Latest: aws.ToBool(v.IsLatest),
		})
	}
	for _, m := range out.DeleteMarkers {
		k, err := decode(m.Key)
		if err != nil {
			return err
		}
		page.Versions = append(page.Versions, object.Version{
			Object: object.Object{Key: k, Mtime: aws.ToTime(m.LastModified)},
			ID:     aws.ToString(m.VersionId), Latest: aws.ToBool(m.IsLatest), DeleteMarker: true,
		})
	}
	sortVersions(page.Versions)
	return nil
}

// sortVersions orders versions by key, newest first within a key.
func sortVersions(vs []object.Version) {
	slices.SortStableFunc(vs, func(a, b object.Version) int {
		if c := strings.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		return b.Mtime.Compare(a.Mtime)
	})
}
