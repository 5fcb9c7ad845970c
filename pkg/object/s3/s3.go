// Package s3 is the driver of pkg/object for S3 and S3-compatible stores
// (storage types s3, minio and cos). Object requests go straight to the
// store over HTTP (s3direct.go), the rest through the AWS SDK (s3.go).
//
// It never prints or logs a credential, and reaches nothing but the store it
// is given.
package s3

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/fsbench/fsbench/pkg/object"
	"github.com/fsbench/fsbench/pkg/object/internal/driver"
)

// The one driver of s3, minio and cos: the stores differ in data only
// (see provider).
func init() {
	for _, p := range []provider{providerS3, providerMinIO, providerCOS} {
		object.Register(s3Driver(p))
	}
}

func s3Driver(p provider) object.Driver {
	return object.Driver{
		Name:        p.name,
		Description: p.description,
		URLForms:    p.forms,
		Endpoints:   true,
		Open: func(ctx context.Context, rawURL string, cfg object.Config) (object.Storage, error) {
			return openS3(ctx, p, rawURL, cfg)
		},
	}
}

type s3Store struct {
	client       *awss3.Client
	http         *http.Client
	bucket       string
	display      string
	region       string
	storageClass types.StorageClass
	// signPayload signs the SHA-256 of every body (object.Config.SignPayload);
	// otherwise bodies go as UNSIGNED-PAYLOAD, sparing a pass over the data.
	signPayload bool
	// direct sends puts, gets, heads and deletes of objects past the
	// SDK's middleware (nil: the SDK sends everything).
	direct *s3Direct
}

func openS3(ctx context.Context, p provider, rawURL string, cfg object.Config) (object.Storage, error) {
	t, err := parseS3URL(p, rawURL, cfg.Addressing)
	if err != nil {
		return nil, err
	}
	if cfg.Endpoint != "" {
		if t.endpoint, err = object.ParseEndpoint(cfg.Endpoint); err != nil {
			return nil, err
		}
		t.virtual = cfg.Addressing == "virtual"
	}
	cred, err := s3Credentials(p, t, cfg)
	if err != nil {
		return nil, err
	}
	hc, tlsConf, err := newHTTPClient(cfg)
	if err != nil {
		return nil, err
	}
	awsCfg, err := s3Config(ctx, p, httpClient{hc, tlsConf}, cred, s3Region(p, t, cfg), cfg)
	if err != nil {
		return nil, err
	}
	client := awss3.NewFromConfig(awsCfg, func(o *awss3.Options) {
		o.UsePathStyle = !t.virtual
		if t.endpoint != "" {
			o.BaseEndpoint = aws.String(t.endpoint)
		}
		// No "Expect: 100-continue": it costs a round trip per PUT.
		o.ContinueHeaderThresholdBytes = -1
		o.DisableLogOutputChecksumValidationSkipped = true
	})
	st := &s3Store{
		client:       client,
		http:         hc,
		bucket:       t.bucket,
		display:      strings.TrimSuffix(t.display(), t.prefix),
		region:       awsCfg.Region,
		signPayload:  cfg.SignPayload,
		storageClass: types.StorageClass(cfg.StorageClass),
		direct:       newS3Direct(ctx, client, hc, t.bucket, cfg),
	}
	if t.prefix != "" {
		return object.WithPrefix(st, t.prefix), nil
	}
	return st, nil
}

// newHTTPClient builds the client the SDK sends requests with: a pool of
// one connection per thread, bounded connect and response-header waits,
// TLS as configured (the returned tls.Config, which the AWS configuration
// may still add a CA bundle to), no transparent compression.
func newHTTPClient(cfg object.Config) (*http.Client, *tls.Config, error) {
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: cfg.Insecure} //nolint:gosec // asked for with --insecure
	if cfg.CACertFile != "" {
		pem, err := os.ReadFile(cfg.CACertFile)
		if err != nil {
			return nil, nil, object.ConfigErrorf("CA certificate: %v", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, nil, object.ConfigErrorf("CA certificate %s: no PEM certificate found", cfg.CACertFile)
		}
		tlsConf.RootCAs = pool
	}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: cfg.Timeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       tlsConf,
		TLSHandshakeTimeout:   cfg.Timeout,
		ResponseHeaderTimeout: headerTimeout(cfg.Timeout),
		MaxIdleConns:          cfg.Threads + 2,
		MaxIdleConnsPerHost:   cfg.Threads + 2,
		IdleConnTimeout:       90 * time.Second,
		DisableCompression:    true,
		WriteBufferSize:       64 << 10,
		ReadBufferSize:        64 << 10,
	}
	return &http.Client{Transport: stallGuard(tr, cfg.Timeout)}, tlsConf, nil
}

// headerTimeout is how long a request waits for the response's headers.
func headerTimeout(timeout time.Duration) time.Duration {
	return max(3*timeout, 30*time.Second)
}

func (s *s3Store) String() string { return s.display }

func (s *s3Store) Close() error {
	s.http.CloseIdleConnections()
	return nil
}

func (s *s3Store) Create(ctx context.Context) error {
	in := &awss3.CreateBucketInput{Bucket: aws.String(s.bucket)}
	_, err := s.client.CreateBucket(ctx, in)
	if err != nil {
		var ae smithy.APIError
		if errors.As(err, &ae) && ae.ErrorCode() == "BucketAlreadyOwnedByYou" {
			return nil
		}
		if errors.As(err, &ae) && ae.ErrorCode() == "IllegalLocationConstraintException" || isAPICode(err, "InvalidLocationConstraint") {
			return s.createIn(ctx)
		}
		return s.err("create bucket", s.bucket, err)
	}
	return nil
}

// createIn retries CreateBucket with a location constraint, which AWS
// wants outside us-east-1.
func (s *s3Store) createIn(ctx context.Context) error {
	in := &awss3.CreateBucketInput{
		Bucket:                    aws.String(s.bucket),
		CreateBucketConfiguration: &types.CreateBucketConfiguration{LocationConstraint: types.BucketLocationConstraint(s.region)},
	}
	_, err := s.client.CreateBucket(ctx, in)
	if isAPICode(err, "BucketAlreadyOwnedByYou") {
		return nil
	}
	return s.err("create bucket", s.bucket, err)
}

func isAPICode(err error, code string) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == code
}

// bodyOpts sets how request bodies are signed. The SDK hashes them over
// HTTP and sends them unsigned over HTTPS; fsbench sends them unsigned on
// both unless asked to sign, and then signs them on both.
func (s *s3Store) bodyOpts(o *awss3.Options) {
	if s.signPayload {
		o.APIOptions = append(o.APIOptions, signedPayload)
	} else {
		o.APIOptions = append(o.APIOptions, unsignedPayload)
	}
}

// unsignedPayload declares the body unsigned before any middleware would
// hash it, the checksum one included (which hashes while it computes a
// header checksum over HTTP). Over HTTPS with trailing checksums the
// checksum middleware still replaces it with its own unsigned marker.
func unsignedPayload(stack *middleware.Stack) error {
	return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("fsbenchUnsignedPayload",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			return next.HandleFinalize(v4.SetPayloadHash(ctx, "UNSIGNED-PAYLOAD"), in)
		}), middleware.Before)
}

// signedPayload replaces the SDK's choice by TLS state with hashing always.
func signedPayload(stack *middleware.Stack) error {
	m := &v4.ComputePayloadSHA256{}
	_, err := stack.Finalize.Swap(m.ID(), m)
	return err
}

func (s *s3Store) Put(ctx context.Context, key string, data io.ReadSeeker) error {
	n, err := driver.Size(data)
	if err != nil {
		return driver.OpErr("put", key, err)
	}
	if s.direct != nil {
		return s.err("put", key, s.direct.put(ctx, key, data, n))
	}
	in := &awss3.PutObjectInput{
		Bucket:        aws.String(s.bucket),
		Key:           aws.String(key),
		Body:          data,
		ContentLength: aws.Int64(n),
		StorageClass:  s.storageClass,
	}
	_, err = s.client.PutObject(ctx, in, s.bodyOpts)
	return s.err("put", key, err)
}

func (s *s3Store) Get(ctx context.Context, key string, off, limit int64) (io.ReadCloser, error) {
	var rng string
	if off > 0 || limit >= 0 {
		if limit == 0 {
			// An empty range cannot be expressed; nothing to fetch.
			if _, err := s.Head(ctx, key); err != nil {
				return nil, err
			}
			return io.NopCloser(strings.NewReader("")), nil
		}
		rng = rangeHeader(off, limit)
	}
	var body io.ReadCloser
	if s.direct != nil {
		var err error
		if body, err = s.direct.get(ctx, key, rng); err != nil {
			return nil, s.err("get", key, err)
		}
	} else {
		in := &awss3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)}
		if rng != "" {
			in.Range = aws.String(rng)
		}
		out, err := s.client.GetObject(ctx, in)
		if err != nil {
			return nil, s.err("get", key, err)
		}
		body = out.Body
	}
	return &s3Body{ReadCloser: body, s: s, key: key}, nil
}

// s3Body gives errors met while reading a body the key and a short form.
type s3Body struct {
	io.ReadCloser
	s   *s3Store
	key string
}

func (b *s3Body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		err = b.s.err("get", b.key, err)
	}
	return n, err
}

func (s *s3Store) Head(ctx context.Context, key string) (object.Object, error) {
	if s.direct != nil {
		o, err := s.direct.head(ctx, key)
		return o, s.err("head", key, err)
	}
	out, err := s.client.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)})
	if err != nil {
		return object.Object{}, s.err("head", key, err)
	}
	o := object.Object{Key: key, Size: aws.ToInt64(out.ContentLength), Mtime: aws.ToTime(out.LastModified), StorageClass: string(out.StorageClass)}
	o.IsDir = strings.HasSuffix(key, "/")
	return o, nil
}

func (s *s3Store) Delete(ctx context.Context, key string) error {
	var err error
	if s.direct != nil {
		err = s.direct.delete(ctx, key)
	} else {
		_, err = s.client.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)})
	}
	if err != nil && isAPICode(err, "NoSuchKey") {
		return nil
	}
	return s.err("delete", key, err)
}

func (s *s3Store) List(ctx context.Context, opt object.ListOptions) (*object.ListPage, error) {
	limit := opt.Limit
	if limit <= 0 || limit > object.DefaultListLimit {
		limit = object.DefaultListLimit
	}
	in := &awss3.ListObjectsV2Input{
		Bucket:       aws.String(s.bucket),
		MaxKeys:      aws.Int32(int32(limit)),
		EncodingType: types.EncodingTypeUrl,
	}
	if opt.Prefix != "" {
		in.Prefix = aws.String(opt.Prefix)
	}
	if opt.StartAfter != "" {
		in.StartAfter = aws.String(opt.StartAfter)
	}
	if opt.Delimiter != "" {
		in.Delimiter = aws.String(opt.Delimiter)
	}
	var out *awss3.ListObjectsV2Output
	var err error
	if s.direct != nil {
		out, err = s.direct.list(ctx, in)
	} else {
		out, err = s.client.ListObjectsV2(ctx, in)
	}
	if err != nil {
		return nil, s.err("list", opt.Prefix, err)
	}
	// Keys come URL-encoded (EncodingType url), so that keys with control
	// characters survive XML.
	decode := func(k string) (string, error) {
		if out.EncodingType != types.EncodingTypeUrl {
			return k, nil
		}
		d, err := url.QueryUnescape(k)
		if err != nil {
			return "", driver.OpErr("list", opt.Prefix, fmt.Errorf("bad key encoding %q: %w", k, err))
		}
		return d, nil
	}
	page := &object.ListPage{Objects: make([]object.Object, 0, len(out.Contents))}
	for _, c := range out.Contents {
		k, err := decode(aws.ToString(c.Key))
		if err != nil {
			return nil, err
		}
		page.Objects = append(page.Objects, object.Object{
			Key: k, Size: aws.ToInt64(c.Size), Mtime: aws.ToTime(c.LastModified),
			StorageClass: string(c.StorageClass), IsDir: strings.HasSuffix(k, "/"),
		})
	}
	for _, cp := range out.CommonPrefixes {
		p, err := decode(aws.ToString(cp.Prefix))
		if err != nil {
			return nil, err
		}
		page.Prefixes = append(page.Prefixes, p)
	}
	page.Truncated = aws.ToBool(out.IsTruncated)
	if page.Truncated {
		// The next page starts after the greatest key or prefix returned.
		for _, o := range page.Objects {
			page.Next = max(page.Next, o.Key)
		}
		for _, p := range page.Prefixes {
			// Every key under p sorts before p+"\xff...": skip them all.
			page.Next = max(page.Next, p+"\U0010FFFF")
		}
	}
	return page, nil
}

func (s *s3Store) CreateMultipartUpload(ctx context.Context, key string) (*object.MultipartUpload, error) {
	out, err := s.client.CreateMultipartUpload(ctx, &awss3.CreateMultipartUploadInput{
		Bucket: aws.String(s.bucket), Key: aws.String(key), StorageClass: s.storageClass,
	})
	if err != nil {
		return nil, s.err("create multipart upload", key, err)
	}
	return &object.MultipartUpload{UploadID: aws.ToString(out.UploadId), MinPartSize: 5 << 20, MaxParts: 10000}, nil
}

func (s *s3Store) UploadPart(ctx context.Context, key, uploadID string, num int, data io.ReadSeeker) (object.Part, error) {
	n, err := driver.Size(data)
	if err != nil {
		return object.Part{}, driver.OpErr("upload part", key, err)
	}
	out, err := s.client.UploadPart(ctx, &awss3.UploadPartInput{
		Bucket: aws.String(s.bucket), Key: aws.String(key), UploadId: aws.String(uploadID),
		PartNumber: aws.Int32(int32(num)), Body: data, ContentLength: aws.Int64(n),
	}, s.bodyOpts)
	if err != nil {
		return object.Part{}, s.err("upload part", key, err)
	}
	return object.Part{Num: num, Size: n, ETag: aws.ToString(out.ETag)}, nil
}

func (s *s3Store) CompleteUpload(ctx context.Context, key, uploadID string, parts []object.Part) error {
	cp := make([]types.CompletedPart, len(parts))
	for i, p := range parts {
		cp[i] = types.CompletedPart{ETag: aws.String(p.ETag), PartNumber: aws.Int32(int32(p.Num))}
	}
	_, err := s.client.CompleteMultipartUpload(ctx, &awss3.CompleteMultipartUploadInput{
		Bucket: aws.String(s.bucket), Key: aws.String(key), UploadId: aws.String(uploadID),
		MultipartUpload: &types.CompletedMultipartUpload{Parts: cp},
	})
	return s.err("complete multipart upload", key, err)
}

func (s *s3Store) AbortUpload(ctx context.Context, key, uploadID string) error {
	_, err := s.client.AbortMultipartUpload(ctx, &awss3.AbortMultipartUploadInput{
		Bucket: aws.String(s.bucket), Key: aws.String(key), UploadId: aws.String(uploadID),
	})
	return s.err("abort multipart upload", key, err)
}

// err turns an SDK error into a one-line *object.Error that matches this
// package's sentinels: "get k: NoSuchKey: The specified key does not
// exist. (HTTP 404)" rather than the SDK's chain of wrappers.
func (s *s3Store) err(op, key string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		cause := context.Canceled
		if errors.Is(err, context.DeadlineExceeded) {
			cause = context.DeadlineExceeded
		}
		return driver.OpErr(op, key, driver.WrapKind(nil, err, "%v", cause))
	}
	// The SDK could not sign: no credentials in the AWS chain.
	if msg := err.Error(); strings.Contains(msg, "get identity: ") {
		_, why, _ := strings.Cut(msg, "get credentials: ")
		if why == "" {
			_, why, _ = strings.Cut(msg, "get identity: ")
		}
		return driver.OpErr(op, key, driver.WrapKind(object.ErrAccess, err,
			"no usable credentials (give --access-key and --secret-key, set ACCESS_KEY and SECRET_KEY or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or configure ~/.aws): %s", why))
	}
	status := 0
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		code := ae.ErrorCode()
		msg := ae.ErrorMessage()
		var kind error
		switch {
		case code == "NoSuchBucket":
			kind = object.ErrNoBucket
			msg = "bucket " + s.bucket + " does not exist"
		case code == "NoSuchKey", code == "NotFound", status == 404 && op == "head":
			kind = object.ErrNotExist
		case code == "SlowDown", code == "Throttling", code == "ThrottlingException", code == "TooManyRequests",
			code == "RequestLimitExceeded", status == 429, status == 503:
			kind = object.ErrThrottled
		case code == "AccessDenied", code == "SignatureDoesNotMatch", code == "InvalidAccessKeyId",
			code == "InvalidToken", code == "ExpiredToken", status == 403:
			kind = object.ErrAccess
		}
		text := code
		if msg != "" && msg != code {
			text += ": " + msg
		}
		if status != 0 {
			text += " (HTTP " + strconv.Itoa(status) + ")"
		}
		return driver.OpErr(op, key, driver.WrapKind(kind, err, "%s", text))
	}
	// Transport errors: keep the innermost useful message, and point at the
	// flags that fix certificate problems.
	var cve *tls.CertificateVerificationError
	var uae x509.UnknownAuthorityError
	var hne x509.HostnameError
	var cie x509.CertificateInvalidError
	if errors.As(err, &cve) || errors.As(err, &uae) || errors.As(err, &hne) || errors.As(err, &cie) {
		return driver.OpErr(op, key, driver.WrapKind(nil, err, "TLS: %s (use --ca-cert FILE to trust its CA, or --insecure)", innermost(err)))
	}
	return driver.OpErr(op, key, driver.WrapKind(nil, err, "%s", innermost(err)))
}

// innermost returns the message of the net or url error inside err, which
// says what failed without the SDK's operation prefixes.
func innermost(err error) string {
	var oe *net.OpError
	if errors.As(err, &oe) {
		return oe.Error()
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}
