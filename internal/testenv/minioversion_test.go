package testenv

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestCheckMinIOVersion(t *testing.T) {
	const pin = "v0.0.0-20260212201848-7aac2a2c5b7c"
	for _, c := range []struct {
		path, version string
		ok            bool
	}{
		{"github.com/minio/minio", pin, true},
		{"github.com/minio/minio", "v0.0.0-20250101000000-0123456789ab", false},
		{"github.com/minio/minio", "(devel)", false},
		{"github.com/minio/minio", "", false},
		{"github.com/minio/mc", pin, false},
	} {
		err := checkMinIOVersion(c.path, c.version, pin)
		if (err == nil) != c.ok {
			t.Errorf("%s %s: %v, want ok=%v", c.path, c.version, err, c.ok)
		}
		if err != nil && c.version != "" && c.version != "(devel)" && c.path == minioModule && !strings.Contains(err.Error(), pin) {
			t.Errorf("%s: error %q does not name the pin", c.version, err)
		}
	}
}

func TestParseMinIOPin(t *testing.T) {
	for _, c := range []struct{ script, want string }{
		{"MINIO_VERSION=\"${MINIO_VERSION:-v0.0.0-1-abc}\"\n", "v0.0.0-1-abc"},
		{"x=1\nMINIO_VERSION=\"${MINIO_VERSION:-v1.2.3}\"\ny=2\n", "v1.2.3"},
		{"# MINIO_VERSION=\"${MINIO_VERSION:-v9}\"\n", ""},
		{"", ""},
	} {
		got, err := parseMinIOPin(c.script)
		if got != c.want || (err == nil) != (c.want != "") {
			t.Errorf("%q = %q, %v; want %q", c.script, got, err, c.want)
		}
	}
	// The real script pins a Go pseudo-version.
	b, err := os.ReadFile(filepath.Join(RepoRoot(), "internal", "testenv", "install.sh"))
	if err != nil {
		t.Fatal(err)
	}
	pin, err := parseMinIOPin(string(b))
	if err != nil || !regexp.MustCompile(`^v0\.0\.0-\d{14}-[0-9a-f]{12}$`).MatchString(pin) {
		t.Errorf("install.sh pin = %q, %v", pin, err)
	}
}
