// Package containerimage tests the fsbench container image: built by `make
// image` with podman, loaded back from its OCI archive, and run as a user
// would run it (non-root, tmpfs volume, MinIO over TLS with a private CA).
package containerimage

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// imageName is the repository of the images these tests build; each test
// process tags its own image with a unique version and removes it at exit.
const imageName = "localhost/fsbench-imagetest"

// maxImageBytes bounds the image's size: 40 MB.
const maxImageBytes = 40_000_000

var (
	buildOnce sync.Once
	built     *testImage
	buildErr  error
)

// testImage is an image built for the tests.
type testImage struct {
	podman  []string
	version string
	ref     string // imageName:version
	archive string // the OCI archive make image wrote
}

// image builds the image once per test process with `make image`, removes
// it from the store and loads it back from the OCI archive, so every test
// runs what a user loads. The image is removed when the tests end.
func image(t *testing.T) *testImage {
	t.Helper()
	podman := testenv.Podman(t)
	buildOnce.Do(func() { built, buildErr = buildImage(podman) })
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return built
}

func buildImage(podman []string) (*testImage, error) {
	dir, err := os.MkdirTemp("", "fsbench-imagetest-")
	if err != nil {
		return nil, err
	}
	testenv.AtExit(func() { os.RemoveAll(dir) })
	img := &testImage{podman: podman, version: "imagetest-" + randomHex(6)}
	img.ref = imageName + ":" + img.version
	archive := filepath.Join(dir, "image.tar")
	img.archive = archive
	testenv.AtExit(func() { img.podmanRun(context.Background(), "rmi", "--force", img.ref) })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "image",
		"VERSION="+img.version, "IMAGE="+imageName, "IMAGE_ARCHIVE="+archive,
		"IMAGE_BIN="+filepath.Join(dir, "fsbench"))
	cmd.Dir = testenv.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("make image: %v\n%s", err, out)
	}
	if _, err := os.Stat(archive); err != nil {
		return nil, fmt.Errorf("make image wrote no archive: %v", err)
	}
	if out, err := img.podmanRun(ctx, "rmi", img.ref); err != nil {
		return nil, fmt.Errorf("podman rmi %s: %v\n%s", img.ref, err, out)
	}
	out, err := img.podmanRun(ctx, "load", "--input", archive)
	if err != nil || !strings.Contains(out, img.ref) {
		return nil, fmt.Errorf("podman load %s: %v\n%s", archive, err, out)
	}
	return img, nil
}

// podmanRun runs podman with args and returns its combined output.
func (img *testImage) podmanRun(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, img.podman[0], append(img.podman[1:], args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// run starts a container of the image, removed when it ends, with the
// podman run options opts and the fsbench arguments args; env is added to
// podman's environment (for --env NAME). It returns stdout and stderr.
func (img *testImage) run(t *testing.T, env, opts []string, args ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	name := "fsbench-imagetest-" + randomHex(6)
	full := append(append(append(img.podman[1:], "run", "--rm", "--name", name), opts...), img.ref)
	cmd := exec.CommandContext(ctx, img.podman[0], append(full, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		img.podmanRun(context.Background(), "rm", "--force", "--ignore", name)
		t.Fatalf("podman run %q: %v\nstdout: %s\nstderr: %s", args, err, stdout.String(), stderr.String())
	}
	return stdout.String(), stderr.String()
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// TestImage checks what the image is: its labels, user, entry point and
// size, and that the static binary in it runs and knows its version.
func TestImage(t *testing.T) {
	img := image(t)
	out, err := img.podmanRun(context.Background(), "image", "inspect", img.ref)
	if err != nil {
		t.Fatalf("podman image inspect: %v\n%s", err, out)
	}
	var info []struct {
		Size   int64
		Config struct {
			User       string
			Entrypoint []string
			Labels     map[string]string
		}
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil || len(info) != 1 {
		t.Fatalf("podman image inspect: %v\n%s", err, out)
	}
	c := info[0].Config
	want := map[string]string{
		"org.opencontainers.image.version":  img.version,
		"org.opencontainers.image.licenses": "Apache-2.0",
		"org.opencontainers.image.source":   "https://github.com/fsbench/fsbench",
	}
	for k, v := range want {
		if c.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, c.Labels[k], v)
		}
	}
	if c.Labels["org.opencontainers.image.description"] == "" {
		t.Error("no description label")
	}
	if c.User != "65532:65532" || strings.Join(c.Entrypoint, " ") != "/usr/local/bin/fsbench" {
		t.Errorf("user %q, entrypoint %q", c.User, c.Entrypoint)
	}
	if info[0].Size <= 0 || info[0].Size > maxImageBytes {
		t.Errorf("image size %d bytes, want at most %d", info[0].Size, maxImageBytes)
	}
	stdout, _ := img.run(t, nil, nil, "--version")
	if strings.TrimSpace(stdout) != "fsbench "+img.version {
		t.Errorf("--version printed %q, want %q", stdout, "fsbench "+img.version)
	}
}

// benchArgs is a short bench run.
var benchArgs = []string{"bench", "/data", "-p", "2", "--big-file-size", "8M", "--small-file-count", "10", "--json"}

// TestImageBench runs bench in a container on a tmpfs, as the image's
// non-root user and as root without the right to drop the host's caches.
func TestImageBench(t *testing.T) {
	img := image(t)
	tmpfs := []string{"--mount", "type=tmpfs,destination=/data"}
	for _, c := range []struct {
		name, user, drop, warning string
	}{
		{"nonroot", "", "fadvise", "not root: only the benchmark's own files are dropped"},
		{"root", "0", "fadvise", "drop caches: read-only file system; dropping only the benchmark's own files instead"},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := tmpfs
			if c.user != "" {
				opts = append([]string{"--user", c.user}, tmpfs...)
			}
			stdout, stderr := img.run(t, nil, opts, benchArgs...)
			res := checkResult(t, stdout, "bench", 5)
			if res.CacheDrop != c.drop || !strings.Contains(strings.Join(res.Warnings, "\n"), c.warning) {
				t.Errorf("cache drop %q, warnings %q; want %q and a warning %q", res.CacheDrop, res.Warnings, c.drop, c.warning)
			}
			if !strings.Contains(stderr, c.warning) {
				t.Errorf("stderr lacks the warning %q:\n%s", c.warning, stderr)
			}
			if res.Target.Path != "/data" || res.Target.FSType != "tmpfs" {
				t.Errorf("target %+v, want /data on tmpfs", res.Target)
			}
		})
	}
}

// checkResult parses a JSON result and checks a complete run of command
// without errors, with at least phases phases.
func checkResult(t *testing.T, stdout, command string, phases int) *report.Result {
	t.Helper()
	res, err := report.ReadJSON(strings.NewReader(stdout))
	if err != nil {
		t.Fatalf("not a JSON result: %v\n%s", err, stdout)
	}
	if res.SchemaVersion != report.SchemaVersion || res.Command != command || res.Error != "" || res.Interrupted {
		t.Errorf("result: schema %d, command %q, error %q, interrupted %v", res.SchemaVersion, res.Command, res.Error, res.Interrupted)
	}
	if len(res.Phases) < phases {
		t.Errorf("%d phases, want at least %d", len(res.Phases), phases)
	}
	for _, p := range res.Phases {
		if p.Value.Unit == report.CheckNotSupport { // chmod and co. on an object store
			continue
		}
		if p.Errors != 0 || p.Ops == 0 {
			t.Errorf("phase %s: %d ops, %d errors", p.Name, p.Ops, p.Errors)
		}
	}
	return res
}

// TestImageObjbench runs objbench in a container against MinIO over TLS,
// trusting the server's private CA the two ways a user would: --ca-cert
// with the CA file mounted, and SSL_CERT_FILE.
func TestImageObjbench(t *testing.T) {
	img := image(t)
	m := testenv.SharedMinIO(t, true)
	env := []string{"ACCESS_KEY=" + m.AccessKey, "SECRET_KEY=" + m.SecretKey}
	opts := []string{"--network", "host", "--env", "ACCESS_KEY", "--env", "SECRET_KEY",
		"--volume", m.CACert + ":/etc/fsbench/ca.pem:ro"}
	small := []string{"--big-object-size", "8M", "--block-size", "4M", "--small-objects", "10", "--small-object-size", "64K", "-p", "2", "--json"}
	for _, c := range []struct {
		name       string
		opts, args []string
		functional bool
	}{
		{"ca-cert", nil, []string{"--ca-cert", "/etc/fsbench/ca.pem"}, true},
		{"SSL_CERT_FILE", []string{"--env", "SSL_CERT_FILE=/etc/fsbench/ca.pem"}, []string{"--skip-functional-tests"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			bucket := "imagetest-" + randomHex(4)
			args := append(append([]string{"objbench", "--storage", "minio", m.URL(bucket)}, small...), c.args...)
			stdout, stderr := img.run(t, env, append(append([]string{}, opts...), c.opts...), args...)
			res := checkResult(t, stdout, "objbench", 5)
			if c.functional && len(res.Checks) < 16 {
				t.Errorf("%d functional checks in the result, want at least 16", len(res.Checks))
			}
			for _, ch := range res.Checks {
				if ch.Status == report.CheckFailed {
					t.Errorf("check %s/%s failed: %s", ch.Category, ch.Name, ch.Reason)
				}
			}
			for name, text := range map[string]string{"stdout": stdout, "stderr": stderr} {
				if strings.Contains(text, m.SecretKey) {
					t.Errorf("the secret key appears in %s", name)
				}
			}
		})
	}
}
