package testenv

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsbench/fsbench/pkg/object"
)

// MinIOCluster is a distributed MinIO for tests: one node in each of a
// set of test hosts (network namespaces, see NewHosts), every node
// started with the drives of all, so that they form one erasure set and
// serve the same buckets. It is stopped, and its drives removed, when the
// test ends.
type MinIOCluster struct {
	// Endpoints are the nodes' S3 endpoints, http://ADDR:9000, in the
	// order of the hosts.
	Endpoints []string
	AccessKey string
	SecretKey string
	Hosts     *Hosts
	dir       string
	nodes     []*exec.Cmd
	exited    []chan struct{}
}

// minioNodePort is the S3 port of every node: each has an address of its own.
const minioNodePort = "9000"

// NewMinIOCluster starts a distributed MinIO of n nodes (at least 2), one
// per test host, and waits until the cluster answers, and takes a write,
// through every node.
// It needs root, network namespaces and the minio binary; without them
// the test is Unavailable.
func NewMinIOCluster(t testing.TB, n int) *MinIOCluster {
	t.Helper()
	if n < 2 {
		t.Fatalf("NewMinIOCluster: %d nodes, want at least 2", n)
	}
	bin, err := LookPath("minio")
	if err != nil {
		Unavailable(t, "minio server binary not found")
	}
	hosts := NewHosts(t, n)
	dir, err := os.MkdirTemp("", "fsbench-minio-cluster-")
	if err != nil {
		t.Fatal(err)
	}
	c := &MinIOCluster{AccessKey: "fsbenchadmin", SecretKey: "fsbench-" + randomHex(12), Hosts: hosts, dir: dir}
	t.Cleanup(c.stop) // runs before the hosts' own clean-up
	drives := c.drives()
	for i, h := range hosts.All() {
		if err := c.startNode(bin, h, i, drives); err != nil {
			t.Fatalf("minio node %d: %v", i, err)
		}
	}
	if err := c.waitReady(); err != nil {
		t.Fatalf("minio cluster: %v", err)
	}
	return c
}

// drives are the drive URLs every node is given: node i's drive is
// http://ADDR_i:9000/DIR/node-i, so each node finds its own by its address.
func (c *MinIOCluster) drives() []string {
	var out []string
	for i, h := range c.Hosts.All() {
		out = append(out, "http://"+net.JoinHostPort(h.Addr(), minioNodePort)+filepath.Join(c.dir, fmt.Sprintf("node-%d", i)))
		c.Endpoints = append(c.Endpoints, "http://"+net.JoinHostPort(h.Addr(), minioNodePort))
	}
	return out
}

func (c *MinIOCluster) startNode(bin string, h *Host, i int, drives []string) error {
	if err := os.MkdirAll(filepath.Join(c.dir, fmt.Sprintf("node-%d", i)), 0o700); err != nil {
		return err
	}
	log, err := os.Create(filepath.Join(c.dir, fmt.Sprintf("node-%d.log", i)))
	if err != nil {
		return err
	}
	args := append([]string{"server", "--quiet", "--address", net.JoinHostPort(h.Addr(), minioNodePort),
		"--console-address", net.JoinHostPort(h.Addr(), "9001")}, drives...)
	cmd := h.Command(context.Background(), bin, args...)
	cmd.Env = append(os.Environ(),
		"MINIO_ROOT_USER="+c.AccessKey, "MINIO_ROOT_PASSWORD="+c.SecretKey,
		"MINIO_BROWSER=off", "MINIO_UPDATE=off",
		"MINIO_CI_CD=1", // drives on the root disk are accepted
		"CI=")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); log.Close(); close(exited) }()
	c.nodes, c.exited = append(c.nodes, cmd), append(c.exited, exited)
	return nil
}

// waitReady waits until every node says the cluster has its quorum and
// answers S3 requests (an anonymous one is refused with 403), and then
// until a write through every node succeeds.
func (c *MinIOCluster) waitReady() error {
	client := &http.Client{Timeout: 2 * time.Second}
	defer client.CloseIdleConnections()
	limit := 2 * minioStartTimeout
	deadline := time.Now().Add(limit)
	for i, ep := range c.Endpoints {
		for status(client, ep+"/minio/health/cluster") != http.StatusOK || status(client, ep+"/") != http.StatusForbidden {
			select {
			case <-c.exited[i]:
				return fmt.Errorf("node %s exited during start-up; log: %s", ep, c.log(i))
			case <-time.After(200 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("node %s not ready after %s; log: %s", ep, limit, c.log(i))
			}
		}
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	for i, ep := range c.Endpoints {
		if err := c.probeWrite(ctx, i); err != nil {
			return fmt.Errorf("node %s not writable after %s: %w; log: %s", ep, limit, err, c.log(i))
		}
	}
	return nil
}

// readyBucket is the bucket of the write probe; it is left empty.
const readyBucket = "fsbench-ready"

// probeWrite puts an object through node i and deletes it, again until
// both succeed or ctx ends. A cluster whose nodes all report write quorum
// may still refuse its first writes (503 SlowDownWrite) while the nodes
// finish connecting to each other's drives, most often on a loaded
// machine: only a write that succeeds shows that it takes writes.
func (c *MinIOCluster) probeWrite(ctx context.Context, i int) error {
	s, err := object.Open(ctx, "minio", c.Endpoints[i]+"/"+readyBucket, object.Config{
		AccessKey: c.AccessKey, SecretKey: object.NewSecret(c.SecretKey), Timeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer s.Close()
	key := fmt.Sprintf("node-%d", i)
	for {
		err := s.Create(ctx)
		if err == nil {
			err = s.Put(ctx, key, strings.NewReader("ready"))
		}
		if err == nil {
			err = s.Delete(ctx, key)
		}
		if err == nil {
			return nil
		}
		select {
		case <-c.exited[i]:
			return fmt.Errorf("node exited: %w", err)
		case <-ctx.Done():
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (c *MinIOCluster) log(i int) string {
	return strings.TrimSpace(tail(filepath.Join(c.dir, fmt.Sprintf("node-%d.log", i))))
}

// URL is the URL of bucket through the first node.
func (c *MinIOCluster) URL(bucket string) string { return c.Endpoints[0] + "/" + bucket }

// stop ends every node and removes the drives.
func (c *MinIOCluster) stop() {
	for _, cmd := range c.nodes {
		_ = cmd.Process.Signal(syscall.SIGTERM)
	}
	for i, cmd := range c.nodes {
		select {
		case <-c.exited[i]:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-c.exited[i]
		}
	}
	os.RemoveAll(c.dir)
}
