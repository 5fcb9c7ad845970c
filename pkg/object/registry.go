package object

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

// Config is what opening a store needs besides its URL. The zero value of
// every field is a sensible default.
type Config struct {
	// Credentials. When AccessKey is empty, drivers look at the
	// environment (see Getenv) and, for s3, the AWS shared configuration.
	AccessKey    string
	SecretKey    Secret
	SessionToken Secret
	// Anonymous sends unsigned requests (public buckets).
	Anonymous bool

	// Region overrides the region found in the URL or the environment.
	Region string
	// Addressing is "path", "virtual" or "" (chosen from the URL form).
	Addressing string
	// StorageClass is given to every Put and multipart upload, if set.
	StorageClass string

	// Threads sizes the connection pool: one connection per thread.
	Threads int
	// Retries is how often a failed request is retried (0: never, so
	// problems are seen rather than hidden).
	Retries int
	// Checksum is "when-required" (default) or "when-supported".
	Checksum string
	// SignPayload makes S3 requests carry the SHA-256 of their body in
	// their signature, for stores that refuse UNSIGNED-PAYLOAD. By default
	// bodies are sent unsigned, over HTTP as over HTTPS, as JuiceFS does:
	// hashing costs a pass over every byte sent.
	SignPayload bool
	// Insecure skips TLS certificate verification; CACertFile adds a CA.
	Insecure   bool
	CACertFile string
	// Timeout bounds connecting, and every wait for the store: an S3
	// request during which nothing moves for this long fails with a
	// StallError (default 10s). A transfer that keeps moving is not
	// bounded.
	Timeout time.Duration

	// Endpoint, if set, is where the store is reached instead of the host
	// of its URL: scheme://host[:port] of one node or gateway of the same
	// store. Bucket, prefix and credentials still come from the URL; the
	// bucket is addressed path-style unless Addressing is "virtual". Only
	// drivers with Driver.Endpoints take it (see OpenEndpoints).
	Endpoint string

	// Getenv reads the environment; nil means os.Getenv. Tests set it.
	Getenv func(string) string
}

// Driver opens one kind of store.
type Driver struct {
	Name        string
	Description string
	// URLForms lists the URL forms the driver accepts, for help texts.
	URLForms []string
	// Endpoints says the driver honours Config.Endpoint.
	Endpoints bool
	// Open connects to the store named by rawURL. It must not leave
	// anything behind (connections, goroutines) when it fails.
	Open func(ctx context.Context, rawURL string, cfg Config) (Storage, error)
}

var (
	regMu   sync.Mutex
	drivers = map[string]Driver{}
)

// Register adds a driver. Registering a name twice is a programming error
// and panics.
func Register(d Driver) {
	regMu.Lock()
	defer regMu.Unlock()
	name := strings.ToLower(d.Name)
	if name == "" || d.Open == nil {
		panic("object: Register of an incomplete driver")
	}
	if _, dup := drivers[name]; dup {
		panic("object: Register called twice for driver " + name)
	}
	d.Name = name
	drivers[name] = d
}

// Drivers returns the registered drivers, sorted by name.
func Drivers() []Driver {
	regMu.Lock()
	defer regMu.Unlock()
	out := make([]Driver, 0, len(drivers))
	for _, d := range drivers {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Names returns the names of the registered drivers, sorted.
func Names() []string {
	var out []string
	for _, d := range Drivers() {
		out = append(out, d.Name)
	}
	return out
}

// ErrUnknownDriver is wrapped by Open's error for a storage type no driver
// serves.
var ErrUnknownDriver = errors.New("unknown storage type")

// Open opens the store of the given type (driver name) at rawURL.
func Open(ctx context.Context, storageType, rawURL string, cfg Config) (Storage, error) {
	regMu.Lock()
	d, ok := drivers[strings.ToLower(storageType)]
	regMu.Unlock()
	if !ok {
		names := Names()
		if len(names) == 0 {
			return nil, fmt.Errorf("%w %q (no driver is registered: import github.com/fsbench/fsbench/pkg/object/all)", ErrUnknownDriver, storageType)
		}
		return nil, fmt.Errorf("%w %q (want one of %s)", ErrUnknownDriver, storageType, strings.Join(names, ", "))
	}
	if cfg.Endpoint != "" && !d.Endpoints {
		return nil, ConfigErrorf("%s: other endpoints are for the S3 drivers (s3, minio, cos)", d.Name)
	}
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	if cfg.Threads <= 0 {
		cfg.Threads = 1
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	return d.Open(ctx, rawURL, cfg)
}
