package cli

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/pkg/object"
)

// TestStoreFlagsBadInput: train and checkpoint take objbench's store
// flags; mistakes are one-line usage errors before anything is made.
func TestStoreFlagsBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "DIR", "--access-key", "AK"}, "--access-key is for an object store: give --storage too"},
		{[]string{"checkpoint", "DIR", "--ca-cert", "/x.pem"}, "--ca-cert is for an object store"},
		{[]string{"train", "DIR", "--storage", "ftp"}, `--storage "ftp": want one of`},
		{[]string{"train", "http://127.0.0.1:1/b", "--storage", "file"}, "looks like a URL, not a directory"},
		{[]string{"train", "http://127.0.0.1:1/b", "--storage", "minio", "--timeout", "0s"}, "--timeout"},
		{[]string{"checkpoint", "http://127.0.0.1:1/b", "--storage", "minio", "--hosts", "a:1,b:1,c:1"}, "8 ranks do not divide evenly over 3 hosts"},
		{[]string{"train", "http://127.0.0.1:1/b", "--storage", "minio", "--direct"}, "--direct is for a file system"},
		{[]string{"checkpoint", "DIR", "--part-size", "8M"}, "--part-size shapes the requests to an object store"},
		{[]string{"checkpoint", "http://127.0.0.1:1/b", "--storage", "minio", "--direct"}, "--direct does not apply"},
		{[]string{"checkpoint", "http://127.0.0.1:1/b", "--storage", "minio", "--part-size", "1M"}, "below the least part"},
		{[]string{"checkpoint", "http://127.0.0.1:1/b", "--storage", "minio", "--parts-in-flight", "0"}, "--parts-in-flight must be between 1"},
		{[]string{"checkpoint", "http://127.0.0.1:1/b", "--storage", "minio", "--secret-key", "a", "--secret-key-file", "/f"}, "give one"},
	} {
		dir := t.TempDir()
		args := append([]string(nil), c.args...)
		if args[1] == "DIR" {
			args[1] = dir
		}
		app, _, errb := testApp(nil)
		code := Run(context.Background(), app, args)
		msg := errb.String()
		if code != ExitUsage || !strings.Contains(msg, c.want) || strings.Count(strings.TrimSpace(msg), "\n") > 0 {
			t.Errorf("%v: exit %d, %q; want 2 and one line saying %q", c.args, code, msg, c.want)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("%v: created %v", c.args, ents)
		}
	}
}

// A dataset in a store is split between the accelerators by its own
// size, read when the run starts, not by the preset's (16 unet3d files
// cannot feed 2 accelerators; the dataset given may).
func TestTrainStoreDatasetShape(t *testing.T) {
	o, code, msg := parseTrain(t, "--storage", "minio", "http://127.0.0.1:1/b", "--model", "unet3d", "--dataset", "kept/", "-p", "2")
	if code != 0 || o.Dataset != "kept/" || o.Accelerators != 2 {
		t.Errorf("exit %d: %s", code, msg)
	}
}

// TestTrainCheckpointMinIO: the binary trains from and checkpoints to a
// MinIO bucket holding an object of the user's, which is all the bucket
// holds afterwards; results follow the schema and never show the secret.
func TestTrainCheckpointMinIO(t *testing.T) {
	m := testenv.SharedMinIO(t, false)
	env := []string{"ACCESS_KEY=" + m.AccessKey, "SECRET_KEY=" + m.SecretKey}
	bucket := "cli-" + time.Now().Format("150405000000")
	s, err := object.Open(context.Background(), "minio", m.URL(bucket), object.Config{AccessKey: m.AccessKey, SecretKey: object.NewSecret(m.SecretKey)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Create(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(context.Background(), "precious/data.bin", strings.NewReader("user data, keep")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"train", "--storage", "minio", m.URL(bucket), "--dataset-files", "8", "--samples-per-file", "10", "--sample-size", "8K",
			"--batch-size", "4", "-p", "2", "--compute-time", "1ms", "--epochs", "1", "--au-threshold", "1", "-o", "json"},
		{"train", "--storage", "minio", m.URL(bucket), "--dataset-files", "40", "--samples-per-file", "1", "--sample-size", "8K",
			"--batch-size", "2", "--compute-time", "1ms", "--epochs", "1", "--au-threshold", "1", "--find-max", "-o", "json"},
		{"checkpoint", "--storage", "minio", m.URL(bucket), "-p", "2", "--size", "12M", "--part-size", "5M", "-o", "json"},
	} {
		stdout, stderr, code := runFsbenchEnv(t, env, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args[:2], code, stderr)
		}
		if strings.Contains(stdout+stderr, m.SecretKey) {
			t.Errorf("%v: the secret key is in the output", args[:2])
		}
		checkSchema(t, args[0]+"'s result", []byte(stdout))
		r, err := report.ReadJSON(strings.NewReader(stdout))
		if err != nil {
			t.Fatal(err)
		}
		if r.Target.Storage != "minio" || (args[0] == "train" && (r.Training == nil || r.FindPhase("train") == nil)) ||
			(args[0] == "checkpoint" && (r.FindPhase("read") == nil || r.FindPhase("read").Bytes != 12<<20)) {
			t.Errorf("%v: result %+v", args[:2], r)
		}
		page, err := s.List(context.Background(), object.ListOptions{})
		if err != nil || len(page.Objects) != 1 || page.Objects[0].Key != "precious/data.bin" {
			t.Errorf("%v: the bucket holds %+v (%v), want only the user's object", args[:2], page, err)
		}
	}
}
