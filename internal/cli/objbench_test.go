package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/units"
)

// parseObjbench runs the objbench command's flag handling and captures the
// options.
func parseObjbench(t *testing.T, env map[string]string, args ...string) (*ObjbenchOptions, int, string) {
	t.Helper()
	app, _, errb := testApp(env)
	var got *ObjbenchOptions
	code, msg := runParse(app, errb, newObjbenchCmdWith(app, func(_ context.Context, o *ObjbenchOptions) error { got = o; return nil }), args)
	return got, code, msg
}

func TestObjbenchFlagDefaults(t *testing.T) {
	o, code, msg := parseObjbench(t, nil, "/data")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	// JuiceFS objbench's defaults.
	if o.Storage != "file" || o.BlockSize != 4*units.MiB || o.BigObjectSize != units.GiB || o.SmallObjectSize != 128*units.KiB ||
		o.SmallObjects != 100 || o.Threads != 4 || o.SkipFunctional || o.Keep {
		t.Errorf("defaults = %+v", o.Options)
	}
	c := o.Object
	if c.Retries != 0 || c.Checksum != "when-required" || c.Insecure || c.SignPayload || c.Addressing != "auto" || c.Timeout.Seconds() != 10 || o.Output.Format != report.FormatTable {
		t.Errorf("object defaults = %+v", c)
	}
}

func TestObjbenchFlags(t *testing.T) {
	o, code, msg := parseObjbench(t, nil, "--storage", "MinIO", "http://127.0.0.1:9000/b",
		"--access-key", "AK", "--secret-key", "SK-secret", "--session-token", "TOK", "--region", "eu-west-1",
		"--addressing", "path", "--block-size", "1M", "--big-object-size", "64M", "--small-object-size", "4K",
		"--small-objects", "7", "-p", "8", "--storage-class", "STANDARD_IA", "--skip-functional-tests", "--keep",
		"--retries", "3", "--checksum", "when-supported", "--insecure", "--ca-cert", "/etc/ca.pem", "--timeout", "3s", "--json", "--sign-payload")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	c := o.Object
	if o.Storage != "minio" || o.URL != "http://127.0.0.1:9000/b" || o.BlockSize != units.MiB || o.BigObjectSize != 64*units.MiB ||
		o.SmallObjectSize != 4096 || o.SmallObjects != 7 || o.Threads != 8 || !o.SkipFunctional || !o.Keep ||
		c.AccessKey != "AK" || c.SecretKey.Reveal() != "SK-secret" || c.SessionToken.Reveal() != "TOK" || c.Region != "eu-west-1" ||
		c.Addressing != "path" || c.StorageClass != "STANDARD_IA" || c.Retries != 3 || c.Checksum != "when-supported" ||
		!c.Insecure || !c.SignPayload || c.CACertFile != "/etc/ca.pem" || c.Timeout.Seconds() != 3 || o.Output.Format != report.FormatJSON {
		t.Errorf("options = %+v", o.Options)
	}
	// The secret is redacted wherever the options are printed.
	if s := strings.Join([]string{c.SecretKey.String(), c.SessionToken.String()}, " "); strings.Contains(s, "SK-secret") || strings.Contains(s, "TOK") {
		t.Errorf("secrets printed: %s", s)
	}
}

func TestObjbenchQuick(t *testing.T) {
	o, code, msg := parseObjbench(t, nil, "/data", "--quick", "--small-objects", "5")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	if o.BigObjectSize != 32*units.MiB || o.BlockSize != units.MiB || o.SmallObjects != 5 || o.SmallObjectSize != 4*units.KiB {
		t.Errorf("--quick: big %d, small objects %d", o.BigObjectSize, o.SmallObjects)
	}
}

func TestObjbenchUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{}, "expects one URL"},
		{[]string{"a", "b"}, "expects one URL"},
		{[]string{"/d", "-p", "0"}, "--threads"},
		{[]string{"/d", "--block-size", "4X"}, "--block-size"},
		{[]string{"/d", "--big-object-size", "0"}, "--big-object-size"},
		{[]string{"/d", "--small-objects", "0"}, "--small-objects"},
		{[]string{"/d", "--addressing", "sideways"}, "--addressing"},
		{[]string{"/d", "--checksum", "always"}, "--checksum"},
		{[]string{"/d", "--retries", "-1"}, "--retries"},
		{[]string{"/d", "--timeout", "soon"}, "--timeout"},
		{[]string{"/d", "--expect", "write-big>=1MiB/s"}, "write-big"},
		{[]string{"/d", "--expect", "functional", "--skip-functional-tests"}, "skipped"},
		{[]string{"/d", "--drop-caches", "sometimes"}, "--drop-caches must be auto, always or never"},
		{[]string{"--storage", "minio", "http://127.0.0.1:9/b", "--drop-caches", "always"}, "--drop-caches applies to --storage file only"},
		{[]string{"/d", "--journal", "j", "--keep"}, "--journal records the puts and deletes of a --workload"},
		{[]string{"/d", "--journal", "j", "--keep", "--workload", "multipart"}, "does not record the multipart workload's objects"},
		{[]string{"/d", "--journal", "j", "--workload", "put"}, "--journal needs --keep"},
		{[]string{"/d", "--journal", "", "--keep", "--workload", "put"}, "--journal names no file"},
		{[]string{"/d", "--journal", "j", "--list-existing"}, "--journal does not apply to --list-existing"},
		// A URL given to the default file storage: --storage was forgotten.
		{[]string{"https://AK:SECRETSK@bucket.s3.amazonaws.com"}, "did you forget --storage"},
	} {
		_, code, msg := parseObjbench(t, nil, c.args...)
		if code != ExitUsage || !strings.Contains(msg, c.want) {
			t.Errorf("objbench %v: exit %d, %q; want exit 2 mentioning %q", c.args, code, msg, c.want)
		}
		if strings.Contains(msg, "SECRETSK") {
			t.Errorf("objbench %v: the secret is in the error: %s", c.args, msg)
		}
	}
}

// Bad input found when opening the store is a usage error too, with one
// line and no secret in it.
func TestObjbenchBadURL(t *testing.T) {
	for _, args := range [][]string{
		{"--storage", "s3", "ftp://AK:SECRETSK@host/bucket"},
		{"--storage", "minio", "http://127.0.0.1:9000"},
		{"--storage", "nfs", "nfs-server-without-path"},
		{"--storage", "cos", "https://AK:SECRETSK@example.com/"},
		{"--storage", "nosuch", "x"},
	} {
		app, out, errb := testApp(map[string]string{"ACCESS_KEY": "a", "SECRET_KEY": "b"})
		code := Run(context.Background(), app, append([]string{"objbench"}, args...))
		msg := errb.String()
		if code != ExitUsage {
			t.Errorf("objbench %v: exit %d (%s), want 2", args, code, msg)
		}
		if strings.Contains(msg+out.String(), "SECRETSK") {
			t.Errorf("objbench %v: the secret is in the output: %s", args, msg)
		}
		if first, _, _ := strings.Cut(msg, "\n"); !strings.HasPrefix(first, "fsbench: ") {
			t.Errorf("objbench %v: error is not one line: %q", args, msg)
		}
	}
}

// The secret key and session token can come from files, which ps does not
// show; a flag and its file together, or an empty file, are usage errors
// that do not show the secret.
func TestObjbenchSecretFiles(t *testing.T) {
	dir := t.TempDir()
	sk, tok, empty := filepath.Join(dir, "sk"), filepath.Join(dir, "tok"), filepath.Join(dir, "empty")
	for p, v := range map[string]string{sk: "SK-from-file\n", tok: "  TOK-from-file\n", empty: "\n"} {
		if err := os.WriteFile(p, []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	url := "http://127.0.0.1:9000/b"
	o, code, msg := parseObjbench(t, nil, "--storage", "minio", url, "--access-key", "AK", "--secret-key-file", sk, "--session-token-file", tok)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	if c := o.Object; c.SecretKey.Reveal() != "SK-from-file" || c.SessionToken.Reveal() != "TOK-from-file" {
		t.Errorf("secrets from files: %q %q", c.SecretKey.Reveal(), c.SessionToken.Reveal())
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--secret-key", "SK-flag", "--secret-key-file", sk}, "give one"},
		{[]string{"--secret-key-file", empty}, "is empty"},
		{[]string{"--session-token-file", filepath.Join(dir, "none")}, "none: no such file"},
	} {
		_, code, msg := parseObjbench(t, nil, append([]string{"--storage", "minio", url}, c.args...)...)
		if code != 2 || !strings.Contains(msg, c.want) || strings.Contains(msg, "SK-") {
			t.Errorf("%v: exit %d %q, want 2 with %q and no secret", c.args, code, msg, c.want)
		}
	}
}
