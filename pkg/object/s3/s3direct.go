package s3

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	smithyauth "github.com/aws/smithy-go/auth"
	"github.com/aws/smithy-go/encoding/httpbinding"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/fsbench/fsbench/pkg/object"
)

// s3Direct sends the requests a benchmark repeats (put, get, head and
// delete of one object) straight through net/http, signed by the SDK's
// SigV4 signer, instead of through the SDK's per-call middleware stack,
// whose cost per request is most of the client's CPU on small objects.
// It reuses what the SDK client resolved: endpoint, addressing style,
// signing region, credentials (cached), retry policy and HTTP client.
// Its errors have the shape of the SDK's (an *awshttp.ResponseError
// around a smithy.APIError), so that s3Store.err and the retry policy
// treat them alike.
type s3Direct struct {
	hc       *http.Client
	base     url.URL // scheme, host and the bucket's path ("" virtual-hosted)
	creds    aws.CredentialsProvider
	signer   *v4.Signer
	region   string // signing region
	retryer  aws.Retryer
	class    string // storage class of puts, or ""
	signBody bool   // sign the SHA-256 of put bodies
}

// emptySHA256 is the SHA-256 of an empty payload, signed for requests
// without a body.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// newS3Direct resolves the bucket's endpoint as the SDK client would and
// returns the direct path to it, or nil when the SDK must keep every
// request: checksums asked for, or an endpoint that is not plain SigV4
// for "s3" (S3 Express, multi-region access points).
func newS3Direct(ctx context.Context, client *awss3.Client, hc *http.Client, bucket string, cfg object.Config) *s3Direct {
	if cfg.Checksum == "when-supported" {
		return nil
	}
	o := client.Options()
	params := awss3.EndpointParameters{
		Bucket:         aws.String(bucket),
		Region:         aws.String(o.Region),
		Endpoint:       o.BaseEndpoint,
		ForcePathStyle: aws.Bool(o.UsePathStyle),
		Accelerate:     aws.Bool(o.UseAccelerate),
		UseFIPS:        aws.Bool(o.EndpointOptions.UseFIPSEndpoint == aws.FIPSEndpointStateEnabled),
		UseDualStack:   aws.Bool(o.EndpointOptions.UseDualStackEndpoint == aws.DualStackEndpointStateEnabled),
		UseArnRegion:   aws.Bool(o.UseARNRegion),
	}
	ep, err := o.EndpointResolverV2.ResolveEndpoint(ctx, params)
	if err != nil || len(ep.Headers) > 0 {
		return nil
	}
	region, ok := sigV4Region(&ep.Properties, o.Region)
	if !ok {
		return nil
	}
	d := &s3Direct{hc: hc, region: region,
		retryer: o.Retryer, class: cfg.StorageClass, signBody: cfg.SignPayload,
		signer: v4.NewSigner(func(so *v4.SignerOptions) { so.DisableURIPathEscaping = true })}
	if !cfg.Anonymous {
		d.creds = o.Credentials
	}
	d.base = url.URL{Scheme: ep.URI.Scheme, Host: ep.URI.Host, Path: strings.TrimSuffix(ep.URI.Path, "/")}
	return d
}

// sigV4Region returns the signing region of an endpoint whose first auth
// scheme is SigV4 for the service "s3".
func sigV4Region(p *smithy.Properties, region string) (string, bool) {
	opts, _ := smithyauth.GetAuthOptions(p)
	if len(opts) == 0 {
		return region, true
	}
	o := opts[0]
	// The endpoint rules name it "sigv4"; smithy's constant is longer.
	if o.SchemeID != "sigv4" && o.SchemeID != smithyauth.SchemeIDSigV4 {
		return "", false
	}
	if name, ok := smithyhttp.GetSigV4SigningName(&o.SignerProperties); ok && name != "s3" {
		return "", false
	}
	if r, ok := smithyhttp.GetSigV4SigningRegion(&o.SignerProperties); ok && r != "" {
		region = r
	}
	return region, true
}

// request is one request of the direct path: method, key, the headers it
// adds, and a body of n bytes (nil for none).
type request struct {
	method  string
	key     string
	rng     string // Range header, or ""
	query   string // encoded query, or ""
	body    io.ReadSeeker
	n       int64
	payload string // payload hash, signed
	md5     string // Content-MD5 header, or ""
}

// do sends r, retrying as the SDK's retryer says, and returns a response
// of status 2xx. Any other status is read into an error and closed.
func (d *s3Direct) do(ctx context.Context, r *request) (*http.Response, error) {
	for attempt := 1; ; attempt++ {
		resp, err := d.once(ctx, r)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil || attempt >= d.retryer.MaxAttempts() || !d.retryer.IsErrorRetryable(err) {
			return nil, err
		}
		delay, derr := d.retryer.RetryDelay(attempt, err)
		if derr != nil {
			return nil, err
		}
		if err := sleep(ctx, delay); err != nil {
			return nil, err
		}
	}
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// once sends one attempt of r.
func (d *s3Direct) once(ctx context.Context, r *request) (*http.Response, error) {
	req, body, err := d.build(ctx, r)
	if err != nil {
		return nil, err
	}
	resp, err := d.hc.Do(req)
	if body != nil {
		// The transport may still be reading the body when an early
		// answer came: stop it before the caller seeks or reuses it.
		body.Close()
	}
	if err != nil {
		// As the SDK does: a request that could not be sent, or whose
		// answer did not come, may be sent again.
		return nil, &smithyhttp.RequestSendError{Err: err}
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	return nil, responseError(resp)
}

// build makes and signs the request of one attempt.
func (d *s3Direct) build(ctx context.Context, r *request) (*http.Request, *guardedBody, error) {
	u := d.base
	u.RawQuery = r.query
	if r.key != "" || u.Path == "" {
		u.Path += "/" + r.key
	}
	if !plainKey(r.key) {
		u.RawPath = d.base.Path + "/" + httpbinding.EscapePath(r.key, false)
	}
	req := (&http.Request{Method: r.method, URL: &u, Host: u.Host, Header: make(http.Header, 8),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}).WithContext(ctx)
	body, err := setBody(req, r)
	if err != nil {
		return nil, nil, err
	}
	req.Header["X-Amz-Content-Sha256"] = []string{r.payload}
	if r.rng != "" {
		req.Header["Range"] = []string{r.rng}
	}
	if r.md5 != "" {
		req.Header["Content-Md5"] = []string{r.md5}
	}
	if r.method == http.MethodPut && d.class != "" {
		req.Header["X-Amz-Storage-Class"] = []string{d.class}
	}
	return req, body, d.sign(ctx, req, r.payload)
}

// plainKey reports whether key is the same escaped, as most keys of a
// benchmark are: letters, digits, "-._~" and "/" (what SigV4 for S3 and
// httpbinding.EscapePath leave as they are).
func plainKey(key string) bool {
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~/", c) >= 0) {
			return false
		}
	}
	return true
}

// smallBody is the size up to which a request body is copied into memory
// first: net/http then writes headers and body at once, in one system
// call and one segment, where a body it cannot see into makes it flush
// the headers alone first, which costs a write here and a read and a
// wake-up at the store for every small put.
const smallBody = 64 << 10

// setBody gives req the body of r, from its start: a copy when it is
// small, else r's reader behind a guard, which is returned.
func setBody(req *http.Request, r *request) (*guardedBody, error) {
	if r.body == nil {
		return nil, nil
	}
	if r.n == 0 {
		req.Body = http.NoBody
		return nil, nil
	}
	if _, err := r.body.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	req.ContentLength = r.n
	if r.n <= smallBody {
		buf := make([]byte, r.n)
		if _, err := io.ReadFull(r.body, buf); err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(buf))
		return nil, nil
	}
	body := &guardedBody{r: r.body}
	req.Body = body
	return body, nil
}

// sign signs req, unless the store is used anonymously.
func (d *s3Direct) sign(ctx context.Context, req *http.Request, payload string) error {
	if d.creds == nil {
		return nil
	}
	c, err := d.creds.Retrieve(ctx)
	if err != nil {
		// The words s3Store.err recognizes in the SDK's own failure.
		return fmt.Errorf("get identity: get credentials: %w", err)
	}
	if c.AccessKeyID == "" && c.SecretAccessKey == "" {
		return nil // anonymous credentials from the chain
	}
	return d.signer.SignHTTP(ctx, c, req, payload, "s3", d.region, time.Now())
}

// guardedBody hands a request body to the transport until it is closed;
// after Close, reads find the end, so no read of the transport overlaps
// the caller's next use of the reader.
type guardedBody struct {
	mu     sync.Mutex
	r      io.Reader
	closed bool
}

func (b *guardedBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, io.EOF
	}
	return b.r.Read(p)
}

func (b *guardedBody) Close() error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	return nil
}

// errorDoc is the body of an S3 error response.
type errorDoc struct {
	Code      string
	Message   string
	RequestID string `xml:"RequestId"`
}

// responseError reads an error response (a bounded part of its body),
// closes it, and returns the error the SDK would: code and message from
// the XML document, or from the status when there is none (HEAD).
func responseError(resp *http.Response) error {
	var doc errorDoc
	err := xml.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&doc)
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if err != nil && err != io.EOF {
		doc = errorDoc{}
	}
	if doc.Code == "" && doc.Message == "" {
		text := http.StatusText(resp.StatusCode)
		doc.Code, doc.Message = strings.ReplaceAll(text, " ", ""), text
	}
	if doc.RequestID == "" {
		doc.RequestID = resp.Header.Get("X-Amz-Request-Id")
	}
	return &awshttp.ResponseError{
		ResponseError: &smithyhttp.ResponseError{
			Response: &smithyhttp.Response{Response: resp},
			Err:      &smithy.GenericAPIError{Code: doc.Code, Message: doc.Message},
		},
		RequestID: doc.RequestID,
	}
}

// payloadHash returns how a body of n bytes is signed: its SHA-256 when
// asked for, else UNSIGNED-PAYLOAD.
func (d *s3Direct) payloadHash(data io.ReadSeeker, n int64) (string, error) {
	if !d.signBody {
		return "UNSIGNED-PAYLOAD", nil
	}
	if n == 0 {
		return emptySHA256, nil
	}
	h := sha256.New()
	if _, err := io.Copy(h, data); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func (d *s3Direct) put(ctx context.Context, key string, data io.ReadSeeker, n int64) error {
	hash, err := d.payloadHash(data, n)
	if err != nil {
		return err
	}
	resp, err := d.do(ctx, &request{method: http.MethodPut, key: key, body: data, n: n, payload: hash})
	if err != nil {
		return err
	}
	return drain(resp)
}

// drain reads the rest of a response's body and closes it, so that its
// connection goes back to the pool.
func drain(resp *http.Response) error {
	_, err := io.Copy(io.Discard, resp.Body)
	if cerr := resp.Body.Close(); err == nil {
		err = cerr
	}
	return err
}

// get returns the body of key, of the range rng ("" for all of it).
func (d *s3Direct) get(ctx context.Context, key, rng string) (io.ReadCloser, error) {
	resp, err := d.do(ctx, &request{method: http.MethodGet, key: key, rng: rng, payload: emptySHA256})
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

func (d *s3Direct) head(ctx context.Context, key string) (object.Object, error) {
	resp, err := d.do(ctx, &request{method: http.MethodHead, key: key, payload: emptySHA256})
	if err != nil {
		return object.Object{}, err
	}
	resp.Body.Close()
	o := object.Object{Key: key, Size: max(resp.ContentLength, 0), IsDir: strings.HasSuffix(key, "/")}
	if lm := resp.Header.Get("Last-Modified"); lm != "" {
		o.Mtime, _ = http.ParseTime(lm)
	}
	o.StorageClass = resp.Header.Get("X-Amz-Storage-Class")
	return o, nil
}

func (d *s3Direct) delete(ctx context.Context, key string) error {
	resp, err := d.do(ctx, &request{method: http.MethodDelete, key: key, payload: emptySHA256})
	if err != nil {
		return err
	}
	return drain(resp)
}

// rangeHeader is the Range of limit bytes from off (to the end when limit
// is negative).
func rangeHeader(off, limit int64) string {
	r := "bytes=" + strconv.FormatInt(off, 10) + "-"
	if limit > 0 {
		r += strconv.FormatInt(off+limit-1, 10)
	}
	return r
}
