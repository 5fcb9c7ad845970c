package s3

import (
	"net"
	"net/url"
	"strings"

	"github.com/fsbench/fsbench/pkg/object"
)

// provider is what distinguishes the stores the S3 driver serves: data, not
// code. Each names its URL forms, how a URL maps to endpoint, bucket and
// region, and where its credentials may be found.
type provider struct {
	name        string
	description string
	forms       []string
	// accessEnv/secretEnv/tokenEnv are the provider's own variables, looked
	// at after ACCESS_KEY, SECRET_KEY and SESSION_TOKEN.
	accessEnv, secretEnv, tokenEnv []string
	// regionEnv are the variables holding a default region.
	regionEnv []string
	// awsChain: without explicit credentials, use the AWS shared
	// configuration and default credential chain.
	awsChain bool
	// virtualHost parses a host of the provider's own domain, in virtual-
	// host style (BUCKET.<service host>). ok is false for other hosts.
	virtualHost func(host string) (bucket, endpointHost, region string, ok bool)
}

var providerS3 = provider{
	name:        "s3",
	description: "Amazon S3 and any S3-compatible store",
	forms: []string{
		"https://BUCKET.s3.REGION.amazonaws.com[/PREFIX]",
		"s3://BUCKET[/PREFIX]",
		"http(s)://HOST[:PORT]/BUCKET[/PREFIX]  (any S3-compatible endpoint, path-style)",
	},
	accessEnv: []string{"AWS_ACCESS_KEY_ID"},
	secretEnv: []string{"AWS_SECRET_ACCESS_KEY"},
	tokenEnv:  []string{"AWS_SESSION_TOKEN"},
	regionEnv: []string{"AWS_REGION", "AWS_DEFAULT_REGION"},
	awsChain:  true,
	virtualHost: func(host string) (string, string, string, bool) {
		// BUCKET.s3.REGION.amazonaws.com, BUCKET.s3-REGION.amazonaws.com,
		// BUCKET.s3.amazonaws.com (us-east-1).
		rest, ok := strings.CutSuffix(host, ".amazonaws.com")
		if !ok {
			return "", "", "", false
		}
		if i := strings.Index(rest, ".s3."); i > 0 {
			region := rest[i+4:]
			if region == "dualstack" || strings.Contains(region, ".") {
				return "", "", "", false
			}
			return rest[:i], "s3." + region + ".amazonaws.com", region, true
		}
		if i := strings.Index(rest, ".s3-"); i > 0 {
			region := rest[i+4:]
			return rest[:i], "s3." + region + ".amazonaws.com", region, true
		}
		if b, ok := strings.CutSuffix(rest, ".s3"); ok && b != "" {
			return b, "s3.amazonaws.com", "us-east-1", true
		}
		return "", "", "", false
	},
}

var providerMinIO = provider{
	name:        "minio",
	description: "MinIO",
	forms:       []string{"http(s)://HOST:PORT/BUCKET[/PREFIX]"},
	accessEnv:   []string{"MINIO_ACCESS_KEY", "MINIO_ROOT_USER"},
	secretEnv:   []string{"MINIO_SECRET_KEY", "MINIO_ROOT_PASSWORD"},
	regionEnv:   []string{"MINIO_REGION"},
}

var providerCOS = provider{
	name:        "cos",
	description: "Tencent Cloud Object Storage",
	forms:       []string{"https://BUCKET-APPID.cos.REGION.myqcloud.com[/PREFIX]"},
	accessEnv:   []string{"COS_SECRETID"},
	secretEnv:   []string{"COS_SECRETKEY"},
	virtualHost: func(host string) (string, string, string, bool) {
		rest, ok := strings.CutSuffix(host, ".myqcloud.com")
		if !ok {
			return "", "", "", false
		}
		i := strings.Index(rest, ".cos.")
		if i <= 0 {
			return "", "", "", false
		}
		region := rest[i+5:]
		if region == "" || strings.Contains(region, ".") {
			return "", "", "", false
		}
		return rest[:i], "cos." + region + ".myqcloud.com", region, true
	},
}

// s3Target is a parsed object-store URL.
type s3Target struct {
	scheme   string // http or https
	endpoint string // scheme://host[:port] of the service; "" for AWS's own resolution
	bucket   string
	prefix   string // key prefix from the URL path, ending in "/" (or empty)
	region   string // from the URL; "" when the URL does not say
	virtual  bool   // virtual-host addressing
	// user credentials found in the URL, removed from it.
	urlAccess string
	urlSecret object.Secret
}

// display is the URL with credentials removed.
func (t *s3Target) display() string {
	host := t.endpoint
	if host == "" {
		return "s3://" + t.bucket + "/" + t.prefix
	}
	if t.virtual {
		u, _ := url.Parse(t.endpoint)
		return u.Scheme + "://" + t.bucket + "." + u.Host + "/" + t.prefix
	}
	return host + "/" + t.bucket + "/" + t.prefix
}

// parseS3URL maps rawURL to a target for provider p.
func parseS3URL(p provider, rawURL, addressing string) (*s3Target, error) {
	shown := object.RedactURL(rawURL)
	if !strings.Contains(rawURL, "://") {
		return nil, object.ConfigErrorf("invalid %s URL %q: want one of %s", p.name, shown, strings.Join(p.forms, ", "))
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, object.ConfigErrorf("invalid %s URL %q", p.name, shown)
	}
	t := &s3Target{}
	if u.User != nil {
		t.urlAccess = u.User.Username()
		if pw, ok := u.User.Password(); ok {
			t.urlSecret = object.NewSecret(pw)
		}
		u.User = nil
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, object.ConfigErrorf("invalid %s URL %q: query strings and fragments are not used", p.name, shown)
	}
	path := strings.TrimPrefix(u.Path, "/")
	switch strings.ToLower(u.Scheme) {
	case "s3":
		if p.name != "s3" {
			return nil, object.ConfigErrorf("invalid %s URL %q: s3:// URLs are for --storage s3", p.name, shown)
		}
		t.scheme = "https"
		t.bucket = u.Host
		t.prefix = path
		t.virtual = true
	case "http", "https":
		t.scheme = strings.ToLower(u.Scheme)
		host := u.Host
		if host == "" {
			return nil, object.ConfigErrorf("invalid %s URL %q: no host", p.name, shown)
		}
		if _, port, err := net.SplitHostPort(host); err == nil && port == "" {
			return nil, object.ConfigErrorf("invalid %s URL %q: empty port", p.name, shown)
		}
		if p.virtualHost != nil {
			if b, ep, region, ok := p.virtualHost(strings.ToLower(u.Hostname())); ok {
				if u.Port() != "" {
					ep += ":" + u.Port()
				}
				t.bucket, t.region, t.virtual = b, region, true
				t.endpoint = t.scheme + "://" + ep
				t.prefix = path
				break
			}
		}
		t.endpoint = t.scheme + "://" + host
		t.bucket, t.prefix, _ = strings.Cut(path, "/")
	default:
		return nil, object.ConfigErrorf("invalid %s URL %q: scheme %q not supported (want one of %s)", p.name, shown, u.Scheme, strings.Join(p.forms, ", "))
	}
	if t.bucket == "" {
		return nil, object.ConfigErrorf("invalid %s URL %q: no bucket (want one of %s)", p.name, shown, strings.Join(p.forms, ", "))
	}
	if t.prefix != "" && !strings.HasSuffix(t.prefix, "/") {
		t.prefix += "/"
	}
	switch addressing {
	case "", "auto":
	case "path":
		if t.endpoint == "" {
			t.endpoint = "https://s3.amazonaws.com"
		}
		t.virtual = false
	case "virtual":
		t.virtual = true
	default:
		return nil, object.ConfigErrorf("invalid addressing style %q (want path or virtual)", addressing)
	}
	return t, nil
}
