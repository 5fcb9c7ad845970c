package s3_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/pkg/object"
	"github.com/fsbench/fsbench/pkg/object/internal/storetest"
)

// TestChainCABundle: credentials from the AWS shared configuration and a
// CA bundle of the AWS configuration (AWS_CA_BUNDLE, or ca_bundle in
// ~/.aws/config) work together, and the bundle is what the store's HTTPS
// certificate is trusted by (no --ca-cert). The SDK takes a bundle only
// for an HTTP client of its own, and once refused every s3 store with
// "unable to add custom RootCAs HTTPClient".
func TestChainCABundle(t *testing.T) {
	m := testenv.SharedMinIO(t, true)
	for _, where := range []string{"AWS_CA_BUNDLE", "ca_bundle"} {
		t.Run(where, func(t *testing.T) {
			dir := t.TempDir()
			creds := filepath.Join(dir, "credentials")
			conf := filepath.Join(dir, "config")
			write(t, creds, "[default]\naws_access_key_id = "+m.AccessKey+"\naws_secret_access_key = "+m.SecretKey+"\n")
			write(t, conf, "[default]\n")
			t.Setenv("AWS_CA_BUNDLE", "")
			if where == "AWS_CA_BUNDLE" {
				t.Setenv("AWS_CA_BUNDLE", m.CACert)
			} else {
				write(t, conf, "[default]\nca_bundle = "+m.CACert+"\n")
			}
			t.Setenv("AWS_SHARED_CREDENTIALS_FILE", creds)
			t.Setenv("AWS_CONFIG_FILE", conf)
			t.Setenv("AWS_PROFILE", "")
			t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
			// fsbench's own variables find nothing: the chain finds the keys.
			cfg := object.Config{Threads: 2, Getenv: func(string) string { return "" }}
			s := storetest.Open(t, "s3", m.URL("cabundle"), cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := s.Create(ctx); err != nil {
				t.Fatalf("create bucket: %v", err)
			}
			s = object.WithPrefix(s, storetest.UniquePrefix())
			if err := s.Put(ctx, "k", strings.NewReader("through the bundle")); err != nil {
				t.Fatalf("put: %v", err)
			}
			t.Cleanup(func() { _ = s.Delete(context.Background(), "k") })
			rc, err := s.Get(ctx, "k", 0, -1)
			if err != nil {
				t.Fatalf("get: %v", err)
			}
			b, err := io.ReadAll(rc)
			rc.Close()
			if err != nil || string(b) != "through the bundle" {
				t.Fatalf("get: %q, %v", b, err)
			}
		})
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
