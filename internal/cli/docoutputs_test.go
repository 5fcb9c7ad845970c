//go:build linux

package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"net/http"
	"net/http/httptest"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/pkg/object"
)

// TestDocsOutputs: every one-line message of the binary a guide shows in a
// code block (a line starting "fsbench: ") is what the binary prints for
// the command that produces it, and a usage error, one ending with
// "(see 'fsbench CMD --help')", exits 2. The command is the "$ fsbench"
// line above the message in its block; a message shown without one has
// its command in docOutputCommands, reconstructed from the prose around
// it; what a command needs (a store: MinIO or a TLS server; a seccomp
// filter) is there too. A message that needs a state the test cannot
// make cheaply is in docOutputSkipped with the reason. A message in
// neither place, and an entry of either table that no guide shows any
// more, fail.
func TestDocsOutputs(t *testing.T) {
	outs := docOutputsOfGuides(t)
	used := map[string]bool{}
	covered := 0
	for _, o := range outs {
		where := o.page + ":" + strconv.Itoa(o.line)
		if reason, ok := docOutputSkipped[o.text]; ok {
			used[o.text] = true
			t.Logf("%s: skipped by design (%s): %s", where, reason, o.text)
			continue
		}
		c, problem := docOutputCommand(o)
		if problem != "" {
			t.Errorf("%s: %s\n\t%s", where, problem, o.text)
			continue
		}
		if _, ok := docOutputCommands[o.text]; ok {
			used[o.text] = true
		}
		t.Run(strings.TrimSuffix(o.page, ".md")+"_"+strconv.Itoa(o.line), func(t *testing.T) {
			checkDocOutput(t, o, c)
		})
		covered++
	}
	for line := range docOutputCommands {
		if !used[line] {
			t.Errorf("docOutputCommands holds a line no guide shows (did the guide's line change?): %s", line)
		}
	}
	for line := range docOutputSkipped {
		if !used[line] {
			t.Errorf("docOutputSkipped holds a line no guide shows (did the guide's line change?): %s", line)
		}
	}
	if covered < 10 {
		t.Errorf("only %d messages of the guides run: the extraction is broken", covered)
	}
	t.Logf("%d messages run, %d skipped by design", covered, len(docOutputSkipped))
}

// docOutput is one message a guide shows the binary printing: its page,
// line, text, and the "$ fsbench" command above it in its block, if any.
type docOutput struct {
	page, text, command string
	line                int
}

// docOutputCommands holds, for a message a guide shows without its
// command, the command (after "fsbench") reconstructed from the prose
// around it, and what it needs: its exit code, a seccomp filter that
// refuses io_uring_setup with EPERM (as Docker's default profile does),
// a store. A message shown with its command may be here for what it
// needs, with no command.
var docOutputCommands = map[string]docOutputCmd{
	// bench.md: "another tool's spelling ... for `--bs 4k`:"
	"fsbench: `--bs` is fio's name; here it is `--xfer-size`, or run fio's line with `fsbench fio` (see 'fsbench bench --help')": {"bench /data --bs 4k", 2, false, "", "", ""},
	// progress-and-help.md: "a plain number of seconds (`stats
	// --interval 1`, ...) is read as seconds, with a notice"; a notice,
	// so the command runs (one sample) and exits 0.
	"fsbench: deprecated: --interval 1: a number of seconds, read as 1s; write a duration (--interval 1s)": {"stats /data --interval 1 --count 1", 0, false, "", "", ""},
	// workloads.md: "refused by a seccomp profile (Docker's default
	// profile does, with EPERM ...)"; bench with the io_uring engine.
	"fsbench: io_uring is not available: io_uring_setup is not permitted: a seccomp profile blocks it (as Docker's default profile does); use --ioengine sync (see 'fsbench bench --help')": {"bench /data --ioengine io_uring", 2, true, "", "", ""},
	// object-stores.md: "a TLS failure ... stops the run before
	// anything is written ... exit code 1"; a store behind TLS whose
	// certificate's CA the system does not know (the test's server).
	"fsbench: prepare: https://127.0.0.1:9000/bench/: TLS: tls: failed to verify certificate: x509: certificate signed by unknown authority (use --ca-cert FILE to trust its CA, or --insecure)": {"objbench --storage minio https://127.0.0.1:9000/bench --access-key KEY --secret-key SECRET --workload put", 1, false, "tls", "127.0.0.1:9000", ""},
	// object-stores.md: "A wrong secret ... exit code 1".
	"fsbench: prepare: http://127.0.0.1:9000/bench/: SignatureDoesNotMatch: The request signature we calculated does not match the signature you provided. Check your key and signing method. (HTTP 403) (check the access key, secret key and their permissions)": {"objbench --storage minio http://127.0.0.1:9000/bench --access-key KEY --secret-key WRONG --workload put", 1, false, "minio", "127.0.0.1:9000", ""},
	// object-features.md: the guide's command on a bucket that exists
	// without versioning; exit 1.
	"fsbench: prepare versioned: bucket http://127.0.0.1:19321/mpbucket2/ keeps no versions, and fsbench changes no setting of a bucket it did not create: enable versioning on it, or name a bucket that does not exist (the run creates it and turns versioning on)": {"", 1, false, "minio", "127.0.0.1:19321", "mpbucket2"},
}

type docOutputCmd struct {
	command     string // "": the guide's "$ fsbench" line
	code        int
	denyIOUring bool
	// store is the server the guide's host (HOST:PORT in the command and
	// the message) stands for: "tls", a TLS server of the test's whose
	// CA the system does not know, or "minio", the tests' MinIO server
	// (its keys in ACCESS_KEY and SECRET_KEY, and its access key for the
	// argument KEY), where bucket, if given, is made first, without
	// versioning.
	store, host, bucket string
}

// docOutputSkipped holds the messages the guides show that this test does
// not run, by design, with the reason.
var docOutputSkipped = map[string]string{
	// capacity.md: the objectives' < and > are shell syntax, which the
	// commands here may not hold; TestCapacityFlags checks both lines.
	"fsbench: --slo: invalid objective \"p99>5ms\": an objective is an upper bound: use < or <= (see 'fsbench bench --help')":                                                      "an objective's > is shell syntax; TestCapacityFlags checks the line, exit 2",
	"fsbench: --expect \"capacity>=5000ops/s\": capacity is the answer of --slo; give --slo too (see 'fsbench bench --help')":                                                      "an expectation's >= is shell syntax; TestCapacityFlags checks the line, exit 2",
	"fsbench: the log holds 769 operations and judging p99<20ms at a rate needs 1000: replay a longer log, or judge a lower percentile (see 'fsbench replay --help')":              "an objective's < is shell syntax, and the log is a recording of the guide's; TestReplayCapacity checks the form on a log of 336 operations, exit 2",
	"fsbench: interrupted again: left behind directory /mnt/x/fsbench-host-123-ab12cd (remove it with: rm -rf /mnt/x/fsbench-host-123-ab12cd)":                                     "a second signal during a run's clean-up; exit 130, not a usage error; the form is checked by the SIGINT/SIGTERM tests of faults_test.go (checkLeftDir)",
	"fsbench: interrupted again: left behind the objects under http://127.0.0.1:9000/bench/fsbench-objbench-host-1795-ab12cd/ (delete every key under that prefix to remove them)": "a second signal during an objbench run's clean-up against a store; exit 130, not a usage error; the form is checked by internal/objbench TestInterruptTwice",
	"fsbench: performance: store http://127.0.0.1:9000/bench/ is not answering: put fsbench-objbench-.../big/7: dial tcp 127.0.0.1:9000: connect: connection refused":              "needs a store killed during a run; exit 1, not a usage error; internal/objbench TestStoreKilledMidRun checks the line up to the cause",
	"fsbench: performance: store http://127.0.0.1:9000/bench/ is not answering: put fsbench-objbench-.../big/5: no answer from the store for 10s (--timeout)":                      "needs a store that hangs during a run; exit 1, not a usage error; internal/objbench TestStoreHungMidRun checks the line up to the cause",
	"fsbench: open: nfs 10.0.0.5: no export holds /no/such/export (no such file or directory)":                                                                                     "needs the nfs-ganesha server (root, and a lock test processes take in turns, up to 10 minutes); exit 1, not a usage error",
	"fsbench: open: nfs 10.0.0.5: directory /exports/bench/run1: no such file or directory (fsbench creates no directory it would leave behind: create it first)":                  "needs the nfs-ganesha server (root, and a lock test processes take in turns, up to 10 minutes); exit 1, not a usage error",
	"fsbench: replay: 48 operations differed from the recording (--allow-differences accepts that):":                                                                               "the first of a multi-line report; needs a recording replayed on a full file system; exit 1, not a usage error",
}

// docOutputPaths are the local paths the guides' commands name, as an
// argument or a flag's value (--directory=/mnt/jfs): each is replaced by
// a directory of the test's in the command, and that directory by the
// path again in the binary's message.
var docOutputPaths = []string{"/dev/shm/ckpt-try", "/mnt/jfs", "/data"}

// docOutputVarying are the parts of a message that vary by machine; they
// are replaced, in the guide's line and the binary's alike, by their
// placeholder before the two are compared.
var docOutputVarying = []struct {
	re          *regexp.Regexp
	placeholder string
}{
	// checkpoint.md: the free space of the checkpoint's directory.
	{regexp.MustCompile(` has [0-9.]+ [KMGT]iB free;`), " has FREE free;"},
}

var docHelpSuffix = regexp.MustCompile(`\(see 'fsbench [a-z0-9 ]+--help'\)$`)

// docOutputsOfGuides returns the messages the guides (docs/*.md) show in
// their code blocks.
func docOutputsOfGuides(t *testing.T) []docOutput {
	pages, _ := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	var outs []docOutput
	for _, page := range pages {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, docOutputs(filepath.Base(page), string(text))...)
	}
	return outs
}

// docOutputs returns the lines of a page's code blocks that start with
// "fsbench: ", each with the nearest "$ fsbench" line above it in its
// block.
func docOutputs(page, text string) []docOutput {
	var outs []docOutput
	fenced, command := false, ""
	for i, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "```") {
			fenced, command = !fenced, ""
			continue
		}
		switch {
		case !fenced:
		case strings.HasPrefix(l, "$ fsbench "):
			command = strings.TrimPrefix(l, "$ fsbench ")
		case strings.HasPrefix(l, "fsbench: "):
			outs = append(outs, docOutput{page: page, text: l, command: command, line: i + 1})
		}
	}
	return outs
}

// docOutputCommand returns the command that prints o and its exit code,
// or what is missing to know them.
func docOutputCommand(o docOutput) (docOutputCmd, string) {
	c := docOutputCmd{command: o.command, code: -1}
	if docHelpSuffix.MatchString(o.text) {
		c.code = ExitUsage
	}
	if r, ok := docOutputCommands[o.text]; ok {
		c, r.command = r, c.command
		if c.command == "" {
			c.command = r.command
		}
	}
	switch {
	case c.command == "":
		return c, "a message shown without its command: add the command to docOutputCommands, or the line to docOutputSkipped with the reason"
	case c.code < 0:
		return c, "not a usage error: add its command and exit code to docOutputCommands, or the line to docOutputSkipped with the reason"
	case strings.ContainsAny(c.command, "'\"|<>;&$`\\"):
		return c, "a command with shell syntax: write its arguments in docOutputCommands"
	}
	return c, ""
}

// checkDocOutput runs the command with the guide's paths replaced by
// directories of the test's (and its store by the test's server), and checks the exit code and that the guide's
// line is one of the binary's "fsbench: " lines, machine-dependent parts
// aside.
func checkDocOutput(t *testing.T, o docOutput, c docOutputCmd) {
	args := strings.Fields(c.command)
	subst := map[string]string{}
	for i, a := range args {
		for _, p := range docOutputPaths {
			if a == p || strings.HasSuffix(a, "="+p) {
				if subst[p] == "" {
					subst[p] = filepath.Join(t.TempDir(), filepath.Base(p))
					if err := os.Mkdir(subst[p], 0o755); err != nil {
						t.Fatal(err)
					}
				}
				args[i] = strings.Replace(a, p, subst[p], 1)
			}
		}
	}
	st := docOutputStore(t, c)
	if c.host != "" {
		for i, a := range args {
			args[i] = strings.ReplaceAll(a, c.host, st.host)
			if a == "KEY" && c.store == "minio" {
				args[i] = st.accessKey
			}
		}
		subst[c.host] = st.host
	}
	if args[0] == "checkpoint" {
		docNeedsNoRoom(t, subst)
	}
	stderr, got := runDocCommand(t, c.denyIOUring, st.env, args)
	var lines []string
	for _, l := range strings.Split(stderr, "\n") {
		if !strings.HasPrefix(l, "fsbench: ") {
			continue
		}
		for p, d := range subst {
			l = strings.ReplaceAll(l, d, p)
		}
		lines = append(lines, docNormalize(l))
	}
	want := docNormalize(o.text)
	found := false
	for _, l := range lines {
		found = found || l == want
	}
	if !found {
		t.Errorf("%s:%d: fsbench %s printed\n\t%s\nthe guide shows\n\t%s", o.page, o.line, c.command, strings.Join(lines, "\n\t"), want)
	}
	if got != c.code {
		t.Errorf("%s:%d: fsbench %s exited %d, want %d; stderr:\n%s", o.page, o.line, c.command, got, c.code, stderr)
	}
}

// docOutputServer is the store a command of a guide runs against.
type docOutputServer struct {
	host, accessKey string
	env             []string
}

// docOutputStore starts or finds the store c needs.
func docOutputStore(t *testing.T, c docOutputCmd) docOutputServer {
	switch c.store {
	case "tls":
		srv := httptest.NewTLSServer(http.NotFoundHandler())
		t.Cleanup(srv.Close)
		return docOutputServer{host: srv.Listener.Addr().String()}
	case "minio":
		m := testenv.SharedMinIO(t, false)
		if c.bucket != "" {
			s, err := object.Open(context.Background(), "minio", m.URL(c.bucket), object.Config{AccessKey: m.AccessKey, SecretKey: object.NewSecret(m.SecretKey)})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Create(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		return docOutputServer{strings.TrimPrefix(m.Endpoint, "http://"), m.AccessKey, []string{"ACCESS_KEY=" + m.AccessKey, "SECRET_KEY=" + m.SecretKey}}
	}
	return docOutputServer{}
}

// runDocCommand runs the binary with args, under the seccomp filter if
// asked, and returns its stderr and exit code.
func runDocCommand(t *testing.T, denyIOUring bool, env, args []string) (string, int) {
	if !denyIOUring {
		_, stderr, code := runFsbenchEnv(t, env, args...)
		return stderr, code
	}
	cmd := testenv.Denying(t, unix.SYS_IO_URING_SETUP, unix.EPERM, testenv.Binary(t), args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		t.Fatal(err)
	}
	return stderr.String(), cmd.ProcessState.ExitCode()
}

func docNormalize(l string) string {
	for _, v := range docOutputVarying {
		l = v.re.ReplaceAllString(l, v.placeholder)
	}
	return l
}

// docNeedsNoRoom skips a checkpoint case where the directory has room for
// the full model: the command would write it rather than be refused.
func docNeedsNoRoom(t *testing.T, dirs map[string]string) {
	for _, d := range dirs {
		var st unix.Statfs_t
		if err := unix.Statfs(d, &st); err != nil {
			t.Fatal(err)
		}
		if free := st.Bavail * uint64(st.Bsize); free >= 100<<30 {
			t.Skipf("%s has %d GiB free: the full checkpoint would be written, not refused", d, free>>30)
		}
	}
}
