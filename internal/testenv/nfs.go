package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/willscott/go-nfs-client/nfs/rpc"

	"github.com/fsbench/fsbench/pkg/object"
	_ "github.com/fsbench/fsbench/pkg/object/all" // every driver, for object.Open
)

// NFS is an nfs-ganesha server started for tests on 127.0.0.1, on ports
// picked when it starts, exporting a temporary directory.
type NFS struct {
	Host      string // 127.0.0.1
	Port      int    // of the NFS service
	MountPort int    // of the MOUNT service
	Export    string // the exported directory, also its path on this host
	dir       string
	cmd       *exec.Cmd
	exited    chan struct{}
	lock      *os.File
	saved     []rpc.Mapping // the portmapper's NFS registrations before
}

// URL returns nfs://127.0.0.1:PORT/EXPORT[/sub]?mountport=MOUNTPORT, which
// needs no portmapper.
func (n *NFS) URL(sub string) string {
	u := "nfs://" + net.JoinHostPort(n.Host, strconv.Itoa(n.Port)) + n.Export
	if sub != "" {
		u += "/" + strings.TrimPrefix(sub, "/")
	}
	return u + "?mountport=" + strconv.Itoa(n.MountPort)
}

const (
	nfsStartTimeout = 60 * time.Second
	// nfsLockTimeout bounds the wait for another test process's server.
	// The ports are free ones, but nfs-ganesha registers its services
	// with the portmapper (it cannot run without), where URLs of the
	// HOST:/PATH form find them: test packages take turns.
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
	ganesha, rpcbind := nfsTools(t)
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

// nfsTools finds the server's programs, or skips t (fails it under CI).
func nfsTools(t testing.TB) (ganesha, rpcbind string) {
	t.Helper()
	NeedsServer(t, "an nfs-ganesha server")
	if os.Geteuid() != 0 {
		Unavailable(t, "an NFS server needs root")
	}
	ganesha, err := LookPath("ganesha.nfsd")
	if err != nil {
		Unavailable(t, "ganesha.nfsd not found")
	}
	rpcbind, err = LookPath("rpcbind")
	if err != nil {
		Unavailable(t, "rpcbind not found")
	}
	return ganesha, rpcbind
}

// StartNFS starts rpcbind (if no portmapper answers) and nfs-ganesha on
// free ports, exporting a new temporary directory, and waits until a
// client can mount it.
func StartNFS(ganesha, rpcbind string) (*NFS, error) {
	lock, err := lockNFS()
	if err != nil {
		return nil, err
	}
	return startNFSLocked(ganesha, rpcbind, lock)
}

// startNFSLocked is StartNFS once the lock is held; the server's Stop
// releases it.
func startNFSLocked(ganesha, rpcbind string, lock *os.File) (*NFS, error) {
	dir, err := os.MkdirTemp("", "fsbench-nfs-")
	if err != nil {
		unlockNFS(lock)
		return nil, err
	}
	n := &NFS{Host: "127.0.0.1", Export: filepath.Join(dir, "export"), dir: dir, lock: lock}
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
	if err := startRPCBind(rpcbind); err != nil {
		return fail(err)
	}
	if n.saved, err = portmapDump(nfsPrograms); err != nil {
		return fail(fmt.Errorf("portmapper: %w", err))
	}
	// A free port may be taken between finding it and ganesha binding it:
	// then ganesha exits at once, and another pair is tried.
	for try := 1; ; try++ {
		err := n.start(ganesha)
		if err == nil {
			return n, nil
		}
		if !errors.Is(err, errExited) || try == 3 {
			return fail(err)
		}
	}
}

// startRPCBind starts rpcbind unless a portmapper answers. It daemonises
// and stays up for later runs, as a system service would.
func startRPCBind(rpcbind string) error {
	if listening("127.0.0.1:111") {
		return nil
	}
	out, err := exec.Command(rpcbind, "-w").CombinedOutput()
	if err != nil {
		return fmt.Errorf("rpcbind: %v: %s", err, out)
	}
	if !waitFor(10*time.Second, func() bool { return listening("127.0.0.1:111") }) {
		return errors.New("rpcbind does not listen on 127.0.0.1:111")
	}
	return nil
}

var errExited = errors.New("ganesha exited during start-up")

// start runs ganesha on two free ports and waits until it serves.
func (n *NFS) start(ganesha string) error {
	var err error
	if n.Port, err = freePort(); err != nil {
		return err
	}
	if n.MountPort, err = freePort(); err != nil {
		return err
	}
	conf := filepath.Join(n.dir, "ganesha.conf")
	if err := os.WriteFile(conf, []byte(ganeshaConfig(n)), 0o644); err != nil {
		return err
	}
	logPath := filepath.Join(n.dir, "ganesha.log")
	cmd := exec.Command(ganesha, "-F", "-f", conf, "-L", logPath, "-p", filepath.Join(n.dir, "ganesha.pid"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", ganesha, err)
	}
	n.cmd, n.exited = cmd, make(chan struct{})
	exited := n.exited
	go func() { _ = cmd.Wait(); close(exited) }()

	deadline := time.Now().Add(nfsStartTimeout)
	for {
		err := tryMount(n.URL(""))
		if err == nil {
			return nil
		} else if time.Now().After(deadline) {
			n.kill()
			return fmt.Errorf("ganesha not ready after %s (%v); log: %s", nfsStartTimeout, err, tail(logPath))
		}
		select {
		case <-exited:
			n.cmd = nil
			return fmt.Errorf("%w; log: %s", errExited, tail(logPath))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func ganeshaConfig(n *NFS) string {
	return fmt.Sprintf(`NFS_CORE_PARAM {
	Protocols = 3, 4;
	Bind_addr = 127.0.0.1;
	NFS_Port = %[3]d;
	MNT_Port = %[4]d;
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
`, n.dir, n.Export, n.Port, n.MountPort)
}

// tryMount opens the export with the driver fsbench uses, and closes it.
func tryMount(url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	s, err := object.Open(ctx, "nfs", url, object.Config{Timeout: 5 * time.Second})
	if err != nil {
		return err
	}
	return s.Close()
}

// Stop ends ganesha, removes the export and lets the next test process
// start its own server.
func (n *NFS) Stop() {
	n.kill()
	if len(n.saved) > 0 {
		if err := restorePortmap(n.saved); err != nil {
			fmt.Fprintf(os.Stderr, "testenv: restoring the portmapper's NFS registrations: %v\n", err)
		}
		n.saved = nil
	}
	os.RemoveAll(n.dir)
	unlockNFS(n.lock)
	n.lock = nil
}

func (n *NFS) kill() {
	if n.cmd == nil || n.cmd.Process == nil {
		return
	}
	terminate(n.cmd.Process, n.exited, 15*time.Second)
	n.cmd = nil
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
