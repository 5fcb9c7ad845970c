package objbench

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/pkg/object"
)

// s3Client is a plain S3 client of m, to look at buckets from outside
// fsbench's object layer: keys, sizes and ETags.
func s3Client(m *testenv.MinIO) *s3.Client {
	return s3.New(s3.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(m.Endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(m.AccessKey, m.SecretKey, ""),
	})
}

// bucketState is every object of bucket as "key size etag", sorted, and
// the names of all buckets.
func bucketState(t *testing.T, c *s3.Client, bucket string) (objects, buckets []string) {
	t.Helper()
	ctx := context.Background()
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			objects = append(objects, fmt.Sprintf("%s %d %s", aws.ToString(o.Key), aws.ToInt64(o.Size), aws.ToString(o.ETag)))
		}
	}
	out, err := c.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range out.Buckets {
		buckets = append(buckets, aws.ToString(b.Name))
	}
	sort.Strings(buckets)
	return objects, buckets
}

func existingOptions(m *testenv.MinIO, bucket string) Options {
	o := Defaults()
	o.Storage, o.URL, o.ListExisting, o.Verify, o.Threads = "minio", m.URL(bucket), true, false, 3
	o.Object = object.Config{AccessKey: m.AccessKey, SecretKey: object.NewSecret(m.SecretKey), Timeout: 10 * time.Second}
	return o
}

// TestListExistingMinIO downloads the objects a user put in a MinIO bucket,
// under a prefix: the run counts exactly those objects and their bytes,
// and the bucket's objects (keys, sizes, ETags) and the list of buckets
// are the same after it. A bucket that does not exist is not created.
func TestListExistingMinIO(t *testing.T) {
	m := testenv.SharedMinIO(t, false)
	bucket := fmt.Sprintf("user-data-%d", time.Now().UnixNano()%1e9)
	s := openMinIO(t, m, bucket)
	ctx := context.Background()
	var want, wantBytes int64
	for i, size := range []int{0, 1, 4 << 10, 300 << 10, 5<<20 + 7, 1 << 20, 17, 64 << 10} {
		data := make([]byte, size)
		rand.Read(data)
		key := fmt.Sprintf("data/set-%d/obj-%d", i%3, i)
		if err := s.Put(ctx, key, bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
		want++
		wantBytes += int64(size)
	}
	putPrecious(t, s) // outside the prefix
	c := s3Client(m)
	beforeObjs, beforeBuckets := bucketState(t, c, bucket)

	o := existingOptions(m, bucket)
	o.ExistingPrefix = "data/"
	res := &report.Result{}
	if err := RunExisting(ctx, o, res); err != nil {
		t.Fatal(err)
	}
	if len(res.Phases) != 1 {
		t.Fatalf("phases = %+v", res.Phases)
	}
	p := res.Phases[0]
	if p.Name != GetExisting || p.Items != want || p.Ops != want || p.Bytes != wantBytes || p.Errors != 0 {
		t.Errorf("%s: %d objects, %d gets, %d bytes, %d errors; want %d objects of %d bytes", p.Name, p.Items, p.Ops, p.Bytes, p.Errors, want, wantBytes)
	}
	if res.Parameters.Get("objects") != int(want) || res.Parameters.Get("listed_bytes") != wantBytes {
		t.Errorf("parameters = %v", res.Parameters)
	}
	afterObjs, afterBuckets := bucketState(t, c, bucket)
	if !reflect.DeepEqual(beforeObjs, afterObjs) || !reflect.DeepEqual(beforeBuckets, afterBuckets) {
		t.Errorf("the store changed:\nobjects before %v\nafter %v\nbuckets before %v\nafter %v", beforeObjs, afterObjs, beforeBuckets, afterBuckets)
	}

	missing := existingOptions(m, bucket+"-missing")
	err := RunExisting(ctx, missing, &report.Result{})
	if _, buckets := bucketState(t, c, bucket); err == nil || !reflect.DeepEqual(buckets, beforeBuckets) {
		t.Errorf("a missing bucket: err = %v, buckets %v, want an error and no new bucket (%v)", err, buckets, beforeBuckets)
	}
	empty := existingOptions(m, bucket)
	empty.ExistingPrefix = "nothing-here/"
	if err := RunExisting(ctx, empty, &report.Result{}); err == nil || !strings.Contains(err.Error(), "no objects") {
		t.Errorf("an empty prefix: err = %v", err)
	}
}

func TestListExistingRefusals(t *testing.T) {
	for _, c := range []struct {
		set  func(*Options)
		want string
	}{
		{func(o *Options) { o.Verify = true }, "--verify"},
		{func(o *Options) { o.Keep = true }, "--keep"},
		{func(o *Options) { o.Workload = "get" }, "--workload"},
	} {
		o := Defaults()
		o.URL, o.ListExisting = t.TempDir(), true
		c.set(&o)
		err := RunExisting(context.Background(), o, &report.Result{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want one about %s", err, c.want)
		}
	}
}
