package s3

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/fsbench/fsbench/pkg/object"
	"github.com/fsbench/fsbench/pkg/object/internal/driver"
)

// deleteDoc is the body of a multi-object delete, in quiet mode: the
// answer names only the keys that failed.
type deleteDoc struct {
	XMLName xml.Name    `xml:"Delete"`
	Quiet   bool        `xml:"Quiet"`
	Objects []deleteKey `xml:"Object"`
}

type deleteKey struct {
	Key string `xml:"Key"`
}

// deleteResult is the answer of a multi-object delete.
type deleteResult struct {
	Errors []struct {
		Key, Code, Message string
	} `xml:"Error"`
}

func (s *s3Store) DeleteKeys(ctx context.Context, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	if len(keys) > object.MaxBatchDelete {
		return driver.OpErr("delete objects", keys[0], fmt.Errorf("%d keys in one request, at most %d", len(keys), object.MaxBatchDelete))
	}
	var failed []failedKey
	var err error
	if s.direct != nil {
		failed, err = s.direct.deleteKeys(ctx, keys)
	} else {
		failed, err = s.sdkDeleteKeys(ctx, keys)
	}
	if err != nil {
		return s.err("delete objects", keys[0], err)
	}
	for _, f := range failed {
		if f.code != "NoSuchKey" {
			return driver.OpErr("delete objects", f.key, fmt.Errorf("%s: %s (%d of %d keys not deleted)", f.code, f.msg, len(failed), len(keys)))
		}
	}
	return nil
}

// failedKey is a key a multi-object delete did not delete, and why.
type failedKey struct{ key, code, msg string }

func (s *s3Store) sdkDeleteKeys(ctx context.Context, keys []string) ([]failedKey, error) {
	objs := make([]types.ObjectIdentifier, len(keys))
	for i, k := range keys {
		objs[i] = types.ObjectIdentifier{Key: aws.String(k)}
	}
	out, err := s.client.DeleteObjects(ctx, &awss3.DeleteObjectsInput{Bucket: aws.String(s.bucket),
		Delete: &types.Delete{Objects: objs, Quiet: aws.Bool(true)}})
	if err != nil {
		return nil, err
	}
	var failed []failedKey
	for _, e := range out.Errors {
		failed = append(failed, failedKey{aws.ToString(e.Key), aws.ToString(e.Code), aws.ToString(e.Message)})
	}
	return failed, nil
}

// deleteKeys sends one multi-object delete. The body carries its
// Content-MD5, which S3 requires of this request.
func (d *s3Direct) deleteKeys(ctx context.Context, keys []string) ([]failedKey, error) {
	doc := deleteDoc{Quiet: true, Objects: make([]deleteKey, len(keys))}
	for i, k := range keys {
		doc.Objects[i].Key = k
	}
	body, err := xml.Marshal(doc)
	if err != nil {
		return nil, err
	}
	sum := md5.Sum(body)
	hash, err := d.payloadHash(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		return nil, err
	}
	resp, err := d.do(ctx, &request{method: http.MethodPost, query: "delete=", body: bytes.NewReader(body),
		n: int64(len(body)), payload: hash, md5: base64.StdEncoding.EncodeToString(sum[:])})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var res deleteResult
	if err := xml.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(&res); err != nil && err != io.EOF {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	var failed []failedKey
	for _, e := range res.Errors {
		failed = append(failed, failedKey{e.Key, e.Code, e.Message})
	}
	return failed, nil
}
