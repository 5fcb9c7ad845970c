package s3

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go/logging"

	"github.com/fsbench/fsbench/pkg/object"
)

// s3Cred is what a store signs requests with; chain means the AWS default
// chain (environment, ~/.aws, instance roles) finds them.
type s3Cred struct {
	access        string
	secret, token object.Secret
	chain         bool
}

// s3Credentials finds the credentials: flags, the URL, ACCESS_KEY...,
// the provider's variables, and for s3 the AWS default chain.
func s3Credentials(p provider, t *s3Target, cfg object.Config) (s3Cred, error) {
	env := firstEnv(cfg.Getenv)
	c := s3Cred{access: cfg.AccessKey, secret: cfg.SecretKey, token: cfg.SessionToken}
	if c.access == "" && c.secret.IsZero() {
		c.access, c.secret = t.urlAccess, t.urlSecret
	}
	if c.access == "" && c.secret.IsZero() {
		c.access, c.secret = env("ACCESS_KEY"), object.NewSecret(env("SECRET_KEY"))
		if c.token.IsZero() {
			c.token = object.NewSecret(env("SESSION_TOKEN"))
		}
	}
	if c.access == "" && c.secret.IsZero() {
		c.access, c.secret = env(p.accessEnv...), object.NewSecret(env(p.secretEnv...))
		if c.token.IsZero() {
			c.token = object.NewSecret(env(p.tokenEnv...))
		}
	}
	if (c.access == "") != c.secret.IsZero() && !cfg.Anonymous {
		return c, object.ConfigErrorf("%s: an access key needs a secret key and a secret key an access key", p.name)
	}
	c.chain = c.access == "" && !cfg.Anonymous
	if c.chain && !p.awsChain {
		return c, object.ConfigErrorf("%s: no credentials: give --access-key and --secret-key, set ACCESS_KEY and SECRET_KEY or %s and %s, or use --anonymous",
			p.name, strings.Join(p.accessEnv, "/"), strings.Join(p.secretEnv, "/"))
	}
	return c, nil
}

// firstEnv returns a lookup of the first of several variables that is set.
func firstEnv(getenv func(string) string) func(names ...string) string {
	return func(names ...string) string {
		for _, n := range names {
			if v := getenv(n); v != "" {
				return v
			}
		}
		return ""
	}
}

// s3Region is the region asked for: the flag, the URL, the provider's
// variables; "" leaves it to the AWS chain or us-east-1.
func s3Region(p provider, t *s3Target, cfg object.Config) string {
	if cfg.Region != "" {
		return cfg.Region
	}
	if t.region != "" {
		return t.region
	}
	return firstEnv(cfg.Getenv)(p.regionEnv...)
}

// httpClient is the client requests go with, and its TLS configuration.
type httpClient struct {
	*http.Client
	tls *tls.Config
}

// s3Config makes the SDK's configuration: credentials (or the default
// chain), region, retries and checksum modes.
func s3Config(ctx context.Context, p provider, hc httpClient, cred s3Cred, region string, cfg object.Config) (aws.Config, error) {
	var awsCfg aws.Config
	switch {
	case cred.chain:
		var err error
		if awsCfg, err = loadChain(ctx, hc, region, cfg.Timeout); err != nil {
			return awsCfg, fmt.Errorf("%s: load AWS configuration: %w", p.name, err)
		}
	case cfg.Anonymous:
		awsCfg = aws.Config{HTTPClient: hc.Client, Logger: logging.Nop{}, Region: region, Credentials: aws.AnonymousCredentials{}}
	default:
		awsCfg = aws.Config{HTTPClient: hc.Client, Logger: logging.Nop{}, Region: region,
			Credentials: credentials.NewStaticCredentialsProvider(cred.access, cred.secret.Reveal(), cred.token.Reveal())}
	}
	if awsCfg.Region == "" {
		awsCfg.Region = "us-east-1"
	}
	awsCfg.Retryer = s3Retryer(cfg.Retries)
	return awsCfg, setChecksums(&awsCfg, cfg.Checksum)
}

// loadChain loads the AWS configuration: the default credential chain, and
// a CA bundle (AWS_CA_BUNDLE, ca_bundle in ~/.aws/config). The SDK adds a
// bundle only to a client of its own, so the chain loads with one that has
// hc's bounds and TLS settings (the chain's requests to IMDS, STS or SSO
// go with it); the bundle then goes to hc, which sends the store's
// requests.
func loadChain(ctx context.Context, hc httpClient, region string, timeout time.Duration) (aws.Config, error) {
	sdk := awshttp.NewBuildableClient().
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = timeout }).
		WithTransportOptions(func(tr *http.Transport) {
			tr.TLSClientConfig = hc.tls.Clone()
			tr.TLSHandshakeTimeout = timeout
			tr.ResponseHeaderTimeout = headerTimeout(timeout)
		})
	opts := []func(*config.LoadOptions) error{config.WithHTTPClient(sdk), config.WithLogger(logging.Nop{})}
	if region != "" {
		opts = append(opts, config.WithRegion(region))
	}
	lctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	awsCfg, err := config.LoadDefaultConfig(lctx, opts...)
	if err != nil {
		return awsCfg, err
	}
	if b, ok := awsCfg.HTTPClient.(*awshttp.BuildableClient); ok {
		if tc := b.GetTransport().TLSClientConfig; tc != nil && tc.RootCAs != nil {
			hc.tls.RootCAs = tc.RootCAs
		}
	}
	awsCfg.HTTPClient = hc.Client
	return awsCfg, nil
}

// s3Retryer retries a failed request up to retries times, without the
// SDK's client-side rate limit; 0 retries nothing, so problems are seen.
func s3Retryer(retries int) func() aws.Retryer {
	return func() aws.Retryer {
		if retries <= 0 {
			return aws.NopRetryer{}
		}
		return retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = retries + 1
			o.RateLimiter = ratelimit.None
		})
	}
}

// setChecksums sets when request and response checksums are computed.
func setChecksums(awsCfg *aws.Config, mode string) error {
	switch mode {
	case "", "when-required":
		awsCfg.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		awsCfg.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	case "when-supported":
		awsCfg.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenSupported
		awsCfg.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenSupported
	default:
		return object.ConfigErrorf("invalid checksum mode %q (want when-required or when-supported)", mode)
	}
	return nil
}
