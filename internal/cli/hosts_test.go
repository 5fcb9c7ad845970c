package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/cluster"
)

func TestParseHosts(t *testing.T) {
	got, err := ParseHosts([]byte("# agents\nnode1:7781\n\n  node2:7781  # rack 2\n[::1]:7781\n"))
	if err != nil || strings.Join(got, ",") != "node1:7781,node2:7781,[::1]:7781" {
		t.Fatalf("%v, %v", got, err)
	}
	for _, bad := range []string{"node1", "node1:0", "node1:99999", ":7781", "a b:1", "node1:x"} {
		if _, err := ParseHosts([]byte("ok:1\n" + bad + "\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func FuzzParseHosts(f *testing.F) {
	f.Add([]byte("node1:7781\n# c\nnode2:1\n"))
	f.Add([]byte("[::1]:1 # x"))
	f.Fuzz(func(t *testing.T, data []byte) {
		hosts, err := ParseHosts(data)
		if err == nil {
			for _, h := range hosts {
				if checkHostPort(h) != nil {
					t.Fatalf("accepted %q", h)
				}
			}
		}
	})
}

// The agents get the user's flags, not the coordinator's own.
func TestAgentArgs(t *testing.T) {
	app, _, _ := testApp(nil)
	var got []string
	cmd := newBenchCmdWith(app, func(_ context.Context, o *BenchOptions) error { return nil })
	cmd.SetArgs([]string{"/data", "-p", "4", "--big-file-size", "64M", "--hosts", "a:1,b:2", "--expect", "write-big>1MiB/s", "--json", "--verify"})
	cmd.RunE = func(c *cobra.Command, args []string) error {
		var err error
		got, _, err = agentArgs(c, args)
		return err
	}
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	s := strings.Join(got, " ")
	for _, want := range []string{"--threads=4", "--big-file-size=64M", "--verify=true", "/data"} {
		if !strings.Contains(s, want) {
			t.Errorf("args %q lack %q", s, want)
		}
	}
	for _, not := range []string{"hosts", "expect", "json"} {
		if strings.Contains(s, not) {
			t.Errorf("args %q carry the coordinator's --%s", s, not)
		}
	}
}

// With --read-others, a host's read phases read the next host's
// directory: alone, with no other host's files, they fail there.
func TestReadOthersReadsTheNextHost(t *testing.T) {
	root := t.TempDir()
	app, _, _ := testApp(nil)
	r := &agentRunner{app: app}
	job := &cluster.Job{Command: "bench", Args: []string{root, "--big-file-size", "1M", "--small-file-count", "0"},
		RunName: "run", Index: 0, Hosts: 2, ReadOthers: true}
	p, err := r.Prepare(job, nil, allowAll)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "run"), 0o755); err != nil { // the agent makes it at prepare
		t.Fatal(err)
	}
	open := func(context.Context, string) error { return nil }
	res, err := p.Run(context.Background(), open)
	if err == nil || !strings.Contains(err.Error(), "host-1") || len(res.Phases) != 2 || res.Phases[0].Errors != 0 {
		t.Fatalf("read of the other host's files: %v (%d phases)", err, len(res.Phases))
	}
}

func TestCommandLineHidesSecrets(t *testing.T) {
	got := CommandLine([]string{"objbench", "--storage", "minio", "http://AK:SK1@127.0.0.1:9000/b", "--secret-key", "SK2",
		"--session-token=SK3", "--expect", "upload>1MiB/s"})
	for _, secret := range []string{"SK1", "SK2", "SK3"} {
		if strings.Contains(got, secret) {
			t.Errorf("%q shows %s", got, secret)
		}
	}
	if !strings.HasPrefix(got, "fsbench objbench --storage minio ") || !strings.Contains(got, "'upload>1MiB/s'") {
		t.Errorf("command line %q", got)
	}
}

// On an agent every phase of io500, bench, train and checkpoint ends at a
// barrier of its own (cluster.EndOf), after its start's and before the
// next phase's: no host prepares the next phase while another is still
// in this one (train's readers, which open every file of the dataset
// before the train phase starts, found another host's share missing).
func TestAgentPhasesEndAtBarriers(t *testing.T) {
	for _, tc := range []struct {
		command string
		args    []string
	}{
		{"io500", []string{"--quick", "--mdtest-easy-files", "5", "--mdtest-hard-files", "5", "--ior-hard-segments", "3", "--ior-easy-transfers", "1", "--ior-easy-xfer", "64K"}},
		{"bench", []string{"--big-file-size", "1M", "--small-file-count", "4"}},
		{"train", []string{"--dataset-files", "4", "--samples-per-file", "4", "--sample-size", "4K", "--batch-size", "2", "--compute-time", "1ms", "--epochs", "1"}},
		{"checkpoint", []string{"--size", "1M", "--ranks", "2"}},
		{"checkpoint", []string{"--size", "1M", "--ranks", "2", "--storage", "file"}},
	} {
		t.Run(tc.command, func(t *testing.T) {
			root := t.TempDir()
			app, _, _ := testApp(nil)
			r := &agentRunner{app: app}
			job := &cluster.Job{Command: tc.command, Args: append([]string{root}, tc.args...), RunName: "run", Index: 0, Hosts: 1}
			p, err := r.Prepare(job, nil, allowAll)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(root, "run"), 0o755); err != nil { // the agent makes it at prepare
				t.Fatal(err)
			}
			var barriers []string
			gate := func(_ context.Context, name string) error { barriers = append(barriers, name); return nil }
			res, err := p.Run(context.Background(), gate)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, ph := range res.Phases {
				want = append(want, ph.Name, cluster.EndOf(ph.Name))
			}
			want = append(want, cluster.FinishPhase)
			if len(res.Phases) < 2 || strings.Join(barriers, ", ") != strings.Join(want, ", ") {
				t.Errorf("barriers %q\nwant %q", barriers, want)
			}
		})
	}
}
