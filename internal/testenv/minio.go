package testenv

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// MinIO is a MinIO server started for tests, listening on 127.0.0.1.
type MinIO struct {
	// Endpoint is http://127.0.0.1:PORT or https://127.0.0.1:PORT.
	Endpoint  string
	AccessKey string
	SecretKey string
	// CACert is the PEM file of the self-signed certificate the HTTPS
	// server presents ("" over HTTP).
	CACert string
	dir    string
	bin    string
	args   []string
	cmd    *exec.Cmd
	exited chan struct{}
	log    *os.File
}

// minioStartTimeout bounds how long a server may take to answer.
const minioStartTimeout = 60 * time.Second

var (
	sharedMu    sync.Mutex
	sharedMinIO = map[bool]*MinIO{}
	sharedErr   = map[bool]error{}
	stoppers    []func()
)

// SharedMinIO returns a MinIO server shared by the tests of this process,
// over HTTPS when tls is set, starting it on first use. The test package
// must call StopServers from TestMain. Without the minio binary the test
// is skipped (failed under CI).
func SharedMinIO(t testing.TB, tls bool) *MinIO {
	t.Helper()
	NeedsServer(t, "a MinIO server")
	bin, err := LookPath("minio")
	if err != nil {
		Unavailable(t, "minio server binary not found")
	}
	if err := checkMinIOBinary(bin); err != nil {
		Unavailable(t, "minio server is not the pinned one: %v", err)
	}
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if m := sharedMinIO[tls]; m != nil {
		return m
	}
	if err := sharedErr[tls]; err != nil {
		t.Fatalf("minio: %v", err)
	}
	m, err := StartMinIO(bin, tls)
	if err != nil {
		sharedErr[tls] = err
		t.Fatalf("minio: %v", err)
	}
	sharedMinIO[tls] = m
	stoppers = append(stoppers, m.Stop)
	return m
}

// StopServers stops every shared server this process started. Call it
// from TestMain after m.Run.
func StopServers() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	for i := len(stoppers) - 1; i >= 0; i-- {
		stoppers[i]()
	}
	stoppers = nil
	sharedMinIO = map[bool]*MinIO{}
	sharedErr = map[bool]error{}
}

// StartMinIO starts a MinIO server on a free port of 127.0.0.1 with a
// fresh data directory and waits until it answers.
func StartMinIO(bin string, useTLS bool) (*MinIO, error) {
	dir, err := os.MkdirTemp("", "fsbench-minio-")
	if err != nil {
		return nil, err
	}
	m := &MinIO{dir: dir, AccessKey: "fsbenchadmin", SecretKey: "fsbench-" + randomHex(12)}
	fail := func(err error) (*MinIO, error) {
		m.Stop()
		return nil, err
	}
	scheme := "http"
	args := []string{"server", "--quiet"}
	if useTLS {
		scheme = "https"
		certs := filepath.Join(dir, "certs")
		if err := os.MkdirAll(certs, 0o700); err != nil {
			return fail(err)
		}
		if err := WriteSelfSigned(certs); err != nil {
			return fail(fmt.Errorf("certificate: %w", err))
		}
		m.CACert = filepath.Join(certs, "public.crt")
		args = append(args, "--certs-dir", certs)
	}
	port, err := freePort()
	if err != nil {
		return fail(err)
	}
	cport, err := freePort()
	if err != nil {
		return fail(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	m.args = append(args, "--address", addr, "--console-address", "127.0.0.1:"+strconv.Itoa(cport), filepath.Join(dir, "data"))
	m.Endpoint = scheme + "://" + addr
	m.log, err = os.Create(filepath.Join(dir, "minio.log"))
	if err != nil {
		return fail(err)
	}
	m.bin = bin
	if err := m.start(); err != nil {
		return fail(err)
	}
	return m, nil
}

// start runs the server with m's arguments and waits until it answers.
func (m *MinIO) start() error {
	cmd := exec.Command(m.bin, m.args...)
	cmd.Env = append(os.Environ(),
		"MINIO_ROOT_USER="+m.AccessKey,
		"MINIO_ROOT_PASSWORD="+m.SecretKey,
		"MINIO_BROWSER=off",
		"MINIO_UPDATE=off",
		"CI=", // MinIO changes behaviour under CI=true
	)
	cmd.Stdout, cmd.Stderr = m.log, m.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", m.bin, err)
	}
	m.cmd = cmd
	exited := make(chan struct{})
	m.exited = exited
	go func() { _ = cmd.Wait(); close(exited) }()

	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // readiness probe only
	}}
	defer client.CloseIdleConnections()
	deadline := time.Now().Add(minioStartTimeout)
	// Ready when the health check says so and the S3 API answers: an
	// anonymous request is refused (403) instead of "server not
	// initialized" (503).
	for {
		if status(client, m.Endpoint+"/minio/health/ready") == http.StatusOK && status(client, m.Endpoint+"/") == http.StatusForbidden {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("server exited during start-up; log: %s", tail(filepath.Join(m.dir, "minio.log")))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("server on %s not ready after %s; log: %s", m.Endpoint, minioStartTimeout, tail(filepath.Join(m.dir, "minio.log")))
		}
	}
}

// NewMinIO starts a MinIO server of the test's own, over HTTP, which the
// test may kill, restart or pause; it is stopped when the test ends.
func NewMinIO(t testing.TB) *MinIO {
	t.Helper()
	NeedsServer(t, "a MinIO server")
	bin, err := LookPath("minio")
	if err != nil {
		Unavailable(t, "minio server binary not found")
	}
	m, err := StartMinIO(bin, false)
	if err != nil {
		t.Fatalf("minio: %v", err)
	}
	t.Cleanup(m.Stop)
	return m
}

// Kill ends the server at once (SIGKILL), as a crash would; its data stays.
func (m *MinIO) Kill() error {
	if err := m.cmd.Process.Kill(); err != nil {
		return err
	}
	<-m.exited
	return nil
}

// Restart starts a killed server again on the same address and data.
func (m *MinIO) Restart() error { return m.start() }

// Pause stops the server's process (SIGSTOP): it keeps its connections
// and accepts new ones, and answers nothing, as a hung server does.
func (m *MinIO) Pause() error { return m.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume lets a paused server run again (SIGCONT).
func (m *MinIO) Resume() error { return m.cmd.Process.Signal(syscall.SIGCONT) }

// Stop ends the server and removes its data.
func (m *MinIO) Stop() {
	if m.cmd != nil && m.cmd.Process != nil {
		_ = m.cmd.Process.Signal(syscall.SIGCONT) // if paused
		terminate(m.cmd.Process, m.exited, 10*time.Second)
	}
	if m.log != nil {
		m.log.Close()
	}
	os.RemoveAll(m.dir)
}

// URL returns the server's URL for bucket.
func (m *MinIO) URL(bucket string) string { return m.Endpoint + "/" + bucket }

func status(c *http.Client, url string) int {
	resp, err := c.Get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x", b)
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// WriteSelfSigned writes public.crt and private.key for 127.0.0.1 and
// localhost into dir: a self-signed certificate valid for a day.
func WriteSelfSigned(dir string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "fsbench test MinIO"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	crt := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	kpem := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
	return errors.Join(
		os.WriteFile(filepath.Join(dir, "public.crt"), crt, 0o644),
		os.WriteFile(filepath.Join(dir, "private.key"), kpem, 0o600),
	)
}
