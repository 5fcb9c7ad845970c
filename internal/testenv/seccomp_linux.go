package testenv

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// seccompEnv carries "syscall:errno" to the test binary started by
// Denying, which installs the filter and runs the program it was given.
const seccompEnv = "FSBENCH_TEST_SECCOMP_DENY"

// Denying returns a command that runs name with args under a seccomp
// filter that fails system call nr with errno, as a container runtime's
// profile does (Docker's default profile refuses io_uring_setup with
// EPERM). It re-runs the test binary, whose testenv.Main installs the
// filter (with no_new_privs, on every thread) and then executes name.
func Denying(t testing.TB, nr uintptr, errno syscall.Errno, name string, args ...string) *exec.Cmd {
	t.Helper()
	if auditArch() == 0 {
		Unavailable(t, "no seccomp filter for %s here", runtime.GOARCH)
	}
	cmd := exec.Command(os.Args[0], append([]string{name}, args...)...)
	cmd.Env = append(os.Environ(), seccompEnv+"="+strconv.FormatUint(uint64(nr), 10)+":"+strconv.Itoa(int(errno)))
	return cmd
}

func auditArch() uint32 {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64
	}
	return 0
}

// runDenied is the child side of Denying: it never returns.
func runDenied(spec string) {
	nr, errno, _ := strings.Cut(spec, ":")
	n, err1 := strconv.ParseUint(nr, 10, 32)
	e, err2 := strconv.ParseUint(errno, 10, 16)
	if err1 != nil || err2 != nil || len(os.Args) < 2 {
		os.Stderr.WriteString("testenv: bad " + seccompEnv + "\n")
		os.Exit(125)
	}
	stmt := func(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }
	jeq := func(k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: k, Jt: jt, Jf: jf}
	}
	filter := []unix.SockFilter{
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, 4), // seccomp_data.arch
		jeq(auditArch(), 1, 0),
		stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW),
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, 0), // seccomp_data.nr
		jeq(uint32(n), 0, 1),
		stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ERRNO|uint32(e)),
		stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW),
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		os.Stderr.WriteString("testenv: no_new_privs: " + err.Error() + "\n")
		os.Exit(125)
	}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog))); errno != 0 {
		os.Stderr.WriteString("testenv: seccomp: " + errno.Error() + "\n")
		os.Exit(125)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, seccompEnv+"=") {
			env = append(env, kv)
		}
	}
	err := syscall.Exec(os.Args[1], os.Args[1:], env)
	os.Stderr.WriteString("testenv: exec " + os.Args[1] + ": " + err.Error() + "\n")
	os.Exit(125)
}
