package cluster_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/internal/train"
	"github.com/fsbench/fsbench/pkg/object"
	"github.com/fsbench/fsbench/pkg/object/objecttest"
)

// noSecret fails the test if the secret shows in the coordinator's output
// or in an agent's log.
func noSecret(t *testing.T, secret string, out testenv.Output, agents ...*agent) {
	t.Helper()
	if strings.Contains(out.Stdout, secret) || strings.Contains(out.Stderr, secret) {
		t.Error("the secret key is in the coordinator's output")
	}
	for _, a := range agents {
		if strings.Contains(a.log.String(), secret) {
			t.Errorf("the secret key is in the log of the agent on %s", a.addr)
		}
	}
}

// TestNetnsStoreHosts: train and checkpoint with --storage minio on two
// test hosts, against a MinIO of two nodes in the same hosts. The agents
// take the credentials from their own environment; the coordinator has
// none. Both hosts are in every merged figure, the counts are exact, and
// the bucket holds what it held before.
func TestNetnsStoreHosts(t *testing.T) {
	m := testenv.NewMinIOCluster(t, 2)
	agents := nsAgentsOn(t, m.Hosts, t.TempDir(), []string{"ACCESS_KEY=" + m.AccessKey, "SECRET_KEY=" + m.SecretKey})
	cfg := object.Config{AccessKey: m.AccessKey, SecretKey: object.NewSecret(m.SecretKey)}
	t.Run("train", func(t *testing.T) {
		url := m.Endpoints[0] + "/hosts-train"
		s := objecttest.UserStore(t, "minio", url, cfg)
		out := coordinator(t, context.Background(), "train", "--storage", "minio", url, "--dataset-files", "8", "--samples-per-file", "10",
			"--sample-size", "8K", "--sample-size-stdev", "1K", "--batch-size", "5", "-p", "2", "--read-threads", "2",
			"--compute-time", "5ms", "--epochs", "2", "--au-threshold", "1", "--seed", "3", "--hosts", hostsFlag(agents...), "-o", "json")
		checkStoreTrain(t, resultOf(t, out), agents)
		objecttest.CheckUntouched(t, s)
		noSecret(t, m.SecretKey, out, agents...)
	})
	t.Run("checkpoint", func(t *testing.T) {
		url := m.Endpoints[1] + "/hosts-checkpoint"
		s := objecttest.UserStore(t, "minio", url, cfg)
		out := coordinator(t, context.Background(), "checkpoint", "--storage", "minio", url, "--ranks", "4", "--size", "40M",
			"--part-size", "5M", "--parts-in-flight", "2", "--hosts", hostsFlag(agents...), "-o", "json")
		checkStoreCheckpoint(t, resultOf(t, out), agents, 40<<20)
		objecttest.CheckUntouched(t, s)
		noSecret(t, m.SecretKey, out, agents...)
	})
}

// checkStoreTrain checks a train run of 8 files x 10 samples of about 8K,
// 2 accelerators on each of the agents, batches of 5, 2 epochs, seed 3:
// each host made half of the files, every rank read exactly its shards,
// and some of them in files the other host made.
func checkStoreTrain(t *testing.T, r *report.Result, agents []*agent) {
	t.Helper()
	sh := trainShape{files: 8, perFile: 10, size: 8192, stdev: 1024, seed: 3, hosts: len(agents), perHost: 2, batch: 5, epochs: 2}
	samples, bytes, foreign := sh.reads(t)
	ds := train.NewDataset("", 8, 10, 8192, 1024, 3, 1)
	gen, tr := r.FindPhase("generate"), r.FindPhase("train")
	if len(r.Hosts) != len(agents) || gen == nil || gen.Items != 8 || gen.Bytes != ds.Bytes || len(gen.Hosts) != len(agents) {
		t.Fatalf("%d hosts; generate: %+v", len(r.Hosts), gen)
	}
	for _, h := range gen.Hosts {
		if h.Items != int64(8/len(agents)) {
			t.Errorf("host %s made %d files; want %d", h.Address, h.Items, 8/len(agents))
		}
	}
	if tr == nil || tr.Items != samples || tr.Bytes != bytes || tr.Errors != 0 || len(tr.Hosts) != len(agents) {
		t.Fatalf("train: want %d samples, %d bytes from %d hosts: %+v", samples, bytes, len(agents), tr)
	}
	f := r.Training
	if f == nil || f.Accelerators != 2*len(agents) || f.Samples != samples || !f.Pass || f.SamplesPerSec <= 0 {
		t.Fatalf("figures: %+v", f)
	}
	for i, rk := range f.Ranks {
		if rk.Rank != i || rk.Host != agents[i/2].addr || rk.Samples != samples/int64(len(f.Ranks)) {
			t.Errorf("rank %d: %+v", i, rk)
		}
	}
	if foreign == 0 {
		t.Error("no rank read a file another host made")
	}
}

// checkStoreCheckpoint checks a checkpoint of size bytes by 4 ranks, 2 on
// each of two agents, in a store: every shard written and read back
// whole, each by a rank of the host before the one that wrote it.
func checkStoreCheckpoint(t *testing.T, r *report.Result, agents []*agent, size int64) {
	t.Helper()
	if len(r.Phases) != 2 || len(r.Hosts) != 2 {
		t.Fatalf("%d phases, %d hosts", len(r.Phases), len(r.Hosts))
	}
	for _, p := range r.Phases {
		if p.Bytes != size || p.Items != 4 || p.Errors != 0 || p.Incomplete || len(p.Hosts) != 2 || len(p.Ranks) != 4 {
			t.Errorf("%s: %d bytes, %d shards, %d errors, incomplete %v, %d hosts, %d rank rows",
				p.Name, p.Bytes, p.Items, p.Errors, p.Incomplete, len(p.Hosts), len(p.Ranks))
		}
	}
	read := r.Phases[1]
	if read.Name != "read" {
		t.Fatalf("second phase %s, want the read-back", read.Name)
	}
	for _, rk := range read.Ranks {
		host := rk.Rank / 2
		if rk.Host != agents[host].addr || rk.Shard/2 != (host+1)%2 || rk.Bytes != size/4 || rk.Incomplete {
			t.Errorf("rank %d on %s read shard %d (%d bytes); want host %s reading host %d's",
				rk.Rank, rk.Host, rk.Shard, rk.Bytes, agents[host].addr, (host+1)%2)
		}
	}
}

// Credentials given to the coordinator travel with the job only over
// TLS: over plain HTTP both commands refuse before any agent runs
// anything; over TLS the agents (with none in their environment) train
// from the store, keep the dataset and train on it again, and the secret
// shows nowhere.
func TestStoreHostsCredentialsOverTLS(t *testing.T) {
	m := testenv.SharedMinIO(t, false)
	root := t.TempDir()
	a, b, ca := tlsAgents(t, root)
	plain := startAgent(t, root)
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte(m.SecretKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url := m.URL("hosts-tls-train")
	cfg := object.Config{AccessKey: m.AccessKey, SecretKey: object.NewSecret(m.SecretKey)}
	s := objecttest.UserStore(t, "minio", url, cfg)
	creds := []string{"--storage", "minio", url, "--access-key", m.AccessKey, "--secret-key-file", secret}
	for _, cmd := range [][]string{{"train"}, {"checkpoint", "-p", "2"}} {
		out := coordinator(t, context.Background(), append(append(cmd, creds...), "--hosts", plain.addr)...)
		if out.Code != 2 || !strings.Contains(out.Stderr, "only over TLS") {
			t.Errorf("%s with credentials over plain HTTP: exit %d: %s", cmd[0], out.Code, out.Stderr)
		}
	}
	args := append(append([]string{"train"}, creds...), "--batch-size", "5", "-p", "2", "--read-threads", "2",
		"--compute-time", "5ms", "--epochs", "2", "--au-threshold", "1", "--seed", "3", "--hosts", hostsFlag(a, b), "--tls-ca", ca, "-o", "json")
	out := coordinator(t, context.Background(), append(args, "--dataset-files", "8", "--samples-per-file", "10", "--sample-size", "8K",
		"--sample-size-stdev", "1K", "--keep")...)
	r := resultOf(t, out)
	checkStoreTrain(t, r, []*agent{a, b})
	noSecret(t, m.SecretKey, out, a, b, plain)
	// The kept dataset, trained on again by both hosts: a key prefix in the
	// store, not a path on the agents' hosts.
	prefix := keptPrefix(t, r)
	out = coordinator(t, context.Background(), append(args, "--dataset", prefix)...)
	again := resultOf(t, out)
	samples, _, _ := trainShape{files: 8, perFile: 10, size: 8192, stdev: 1024, seed: 3, hosts: 2, perHost: 2, batch: 5, epochs: 2}.reads(t)
	if tr := again.FindPhase("train"); again.FindPhase("generate") != nil || tr == nil || tr.Items != samples || len(tr.Hosts) != 2 {
		t.Errorf("training again on %s: %+v", prefix, again.Phases)
	}
	noSecret(t, m.SecretKey, out, a, b, plain)
	kept := objecttest.Keys(t, object.WithPrefix(s, prefix))
	if len(kept) != 9 { // 8 files and the description
		t.Errorf("kept %d objects under %s: %v", len(kept), prefix, kept)
	}
	for _, k := range kept {
		if err := s.Delete(context.Background(), prefix+k); err != nil {
			t.Fatal(err)
		}
	}
	objecttest.CheckUntouched(t, s)
}

// keptPrefix is the prefix of the dataset a run kept, from its warning.
func keptPrefix(t *testing.T, r *report.Result) string {
	t.Helper()
	for _, w := range r.Warnings {
		if _, after, ok := strings.Cut(w, "--dataset "); ok {
			return strings.TrimSuffix(after, ")")
		}
	}
	t.Fatalf("no dataset kept: %v", r.Warnings)
	return ""
}

// A checkpoint through the NFS driver on two agents: each host's shards
// under its own directory of the run, read back by the other host; at the
// end the export holds the user's file alone, not even the run's emptied
// directories.
func TestStoreHostsNFSCheckpoint(t *testing.T) {
	n := testenv.SharedNFS(t)
	sub := "hosts-ckpt-" + time.Now().Format("150405.000000000")
	dir := filepath.Join(n.Export, sub)
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mine"), []byte("the user's own"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	a, b := startAgent(t, root), startAgent(t, root)
	out := coordinator(t, context.Background(), "checkpoint", "--storage", "nfs", n.URL(sub), "-p", "2", "--size", "24M",
		"--part-size", "5M", "--hosts", hostsFlag(a, b), "-o", "json")
	checkStoreCheckpoint(t, resultOf(t, out), []*agent{a, b}, 24<<20)
	if l := left(t, dir); !slices.Equal(l, []string{"mine"}) {
		t.Errorf("the export holds %v; want only the user's file", l)
	}
}
