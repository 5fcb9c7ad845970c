package testenv

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/willscott/go-nfs-client/nfs"
	"github.com/willscott/go-nfs-client/nfs/rpc"
)

// NFS is an nfs-ganesha server started for tests on 127.0.0.1, exporting
// a temporary directory.
type NFS struct {
	Host   string // 127.0.0.1
	Export string // the exported directory, also its path on this host
	dir    string
	cmd    *exec.Cmd
	exited chan struct{}
	lock   *os.File
}

// URL returns nfs://127.0.0.1/EXPORT[/sub].
func (n *NFS) URL(sub string) string {
	u := "nfs://" + n.Host + n.Export
	if sub != "" {
		u += "/" + strings.TrimPrefix(sub, "/")
	}
	return u
}

const (
	nfsStartTimeout = 60 * time.Second
	// nfsLockTimeout bounds the wait for another test process's server:
	// NFS servers use the fixed port 2049, so test packages take turns.
	nfsLockTimeout = 10 * time.Minute
	nfsLockFile    = "fsbench-test-nfs.lock"
)

var sharedNFS *NFS
var sharedNFSErr error

// SharedNFS returns an NFS server shared by the tests of this process,
// starting it on first use. The test package must call StopServers from
// TestMain. Without root, nfs-ganesha or rpcbind, the test is skipped
// (failed under CI).
func SharedNFS(t testing.TB) *NFS {
	t.Helper()
	if os.Geteuid() != 0 {
		Unavailable(t, "an NFS server needs root")
	}
	ganesha, err := LookPath("ganesha.nfsd")
	if err != nil {
		Unavailable(t, "ganesha.nfsd not found")
	}
	rpcbind, err := LookPath("rpcbind")
	if err != nil {
		Unavailable(t, "rpcbind not found")
	}
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedNFS != nil {
		return sharedNFS
	}
	if sharedNFSErr != nil {
		t.Fatalf("nfs: %v", sharedNFSErr)
	}
	n, err := StartNFS(ganesha, rpcbind)
	if err != nil {
		sharedNFSErr = err
		t.Fatalf("nfs: %v", err)
	}
	sharedNFS = n
	stoppers = append(stoppers, func() { n.Stop(); sharedNFS = nil })
	return n
}

// StartNFS starts rpcbind (if no portmapper answers) and nfs-ganesha
// exporting a new temporary directory, and waits until a client can
// mount it.
func StartNFS(ganesha, rpcbind string) (*NFS, error) {
	lock, err := lockNFS()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "fsbench-nfs-")
	if err != nil {
		unlockNFS(lock)
		return nil, err
	}
	n := &NFS{Host: "127.0.0.1", Export: filepath.Join(dir, "export"), dir: dir, exited: make(chan struct{}), lock: lock}
	fail := func(err error) (*NFS, error) {
		n.Stop()
		return nil, err
	}
	if err := os.MkdirAll(n.Export, 0o777); err != nil {
		return fail(err)
	}
	if err := os.Chmod(n.Export, 0o777); err != nil {
		return fail(err)
	}
	if !listening("127.0.0.1:111") {
		// rpcbind daemonises; it stays up for later runs, as a system
		// service would.
		out, err := exec.Command(rpcbind, "-w").CombinedOutput()
		if err != nil {
			return fail(fmt.Errorf("rpcbind: %v: %s", err, out))
		}
		if !waitFor(10*time.Second, func() bool { return listening("127.0.0.1:111") }) {
			return fail(errors.New("rpcbind does not listen on 127.0.0.1:111"))
		}
	}
	if listening("127.0.0.1:2049") {
		return fail(errors.New("another NFS server already listens on 127.0.0.1:2049"))
	}
	conf := filepath.Join(dir, "ganesha.conf")
	config := fmt.Sprintf(`NFS_CORE_PARAM {
	Protocols = 3, 4;
	Bind_addr = 127.0.0.1;
	Enable_NLM = false;
	Enable_RQUOTA = false;
}
NFSV4 {
	Graceless = true;
	RecoveryRoot = %[1]s/recovery;
}
EXPORT {
	Export_Id = 77;
	Path = %[2]s;
	Pseudo = %[2]s;
	Access_Type = RW;
	Squash = No_Root_Squash;
	SecType = sys;
	FSAL { Name = VFS; }
}
`, dir, n.Export)
	if err := os.WriteFile(conf, []byte(config), 0o644); err != nil {
		return fail(err)
	}
	logPath := filepath.Join(dir, "ganesha.log")
	cmd := exec.Command(ganesha, "-F", "-f", conf, "-L", logPath, "-p", filepath.Join(dir, "ganesha.pid"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fail(fmt.Errorf("start %s: %w", ganesha, err))
	}
	n.cmd = cmd
	go func() { _ = cmd.Wait(); close(n.exited) }()

	deadline := time.Now().Add(nfsStartTimeout)
	for {
		if err := tryMount(n.Host, n.Export); err == nil {
			return n, nil
		} else if time.Now().After(deadline) {
			return fail(fmt.Errorf("ganesha not ready after %s (%v); log: %s", nfsStartTimeout, err, tail(logPath)))
		}
		select {
		case <-n.exited:
			return fail(fmt.Errorf("ganesha exited during start-up; log: %s", tail(logPath)))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// tryMount mounts the export with the client fsbench uses, and unmounts.
func tryMount(host, export string) error {
	if !listening(host + ":2049") {
		return errors.New("port 2049 closed")
	}
	done := make(chan error, 1)
	go func() {
		m, err := nfs.DialMount(host, 0)
		if err != nil {
			done <- err
			return
		}
		defer m.Close()
		t, err := m.Mount(export, rpc.AuthNull)
		if err != nil {
			done <- err
			return
		}
		t.Close()
		_ = m.Unmount()
		done <- nil
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(15 * time.Second):
		return errors.New("mount timed out")
	}
}

// Stop ends ganesha, removes the export and lets the next test process
// start its own server.
func (n *NFS) Stop() {
	if n.cmd != nil && n.cmd.Process != nil {
		_ = n.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-n.exited:
		case <-time.After(15 * time.Second):
			_ = n.cmd.Process.Kill()
			<-n.exited
		}
	}
	os.RemoveAll(n.dir)
	unlockNFS(n.lock)
	n.lock = nil
}

func lockNFS() (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), nfsLockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(nfsLockTimeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func unlockNFS(f *os.File) {
	if f != nil {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
}

func listening(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func waitFor(d time.Duration, ok func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if ok() {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return ok()
}
