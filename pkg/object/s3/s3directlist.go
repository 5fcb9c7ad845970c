package s3

import (
	"context"
	"encoding/xml"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// listResult is the part of a ListObjectsV2 answer that List uses.
type listResult struct {
	IsTruncated  bool
	EncodingType string
	Contents     []struct {
		Key          string
		LastModified time.Time
		Size         int64
		StorageClass string
	}
	CommonPrefixes []struct{ Prefix string }
}

// list sends in as one ListObjectsV2 request and returns the answer as
// the SDK would: decoded by encoding/xml into the few fields List reads,
// at a fraction of the SDK's cost for a page of a thousand keys.
func (d *s3Direct) list(ctx context.Context, in *awss3.ListObjectsV2Input) (*awss3.ListObjectsV2Output, error) {
	q := url.Values{"list-type": {"2"}, "encoding-type": {string(in.EncodingType)}}
	if in.MaxKeys != nil {
		q.Set("max-keys", strconv.Itoa(int(*in.MaxKeys)))
	}
	for k, v := range map[string]*string{"prefix": in.Prefix, "start-after": in.StartAfter, "delimiter": in.Delimiter} {
		if v != nil {
			q.Set(k, *v)
		}
	}
	resp, err := d.do(ctx, &request{method: http.MethodGet, query: q.Encode(), payload: emptySHA256})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r listResult
	if err := xml.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, err
	}
	out := &awss3.ListObjectsV2Output{IsTruncated: aws.Bool(r.IsTruncated), EncodingType: types.EncodingType(r.EncodingType),
		Contents: make([]types.Object, len(r.Contents)), CommonPrefixes: make([]types.CommonPrefix, len(r.CommonPrefixes))}
	for i := range r.Contents {
		c := &r.Contents[i]
		out.Contents[i] = types.Object{Key: &c.Key, LastModified: &c.LastModified, Size: &c.Size, StorageClass: types.ObjectStorageClass(c.StorageClass)}
	}
	for i := range r.CommonPrefixes {
		out.CommonPrefixes[i].Prefix = &r.CommonPrefixes[i].Prefix
	}
	return out, drain(resp)
}
