package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fsbench/fsbench/internal/cluster"
	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/leftover"
	"github.com/fsbench/fsbench/internal/pattern"
	"github.com/fsbench/fsbench/internal/prom"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/pkg/object"
)

// HostsOptions are the flags that run a command on many hosts.
type HostsOptions struct {
	Hosts      []string
	HostsFile  string
	TokenFile  string
	TLSCA      string
	ReadOthers bool
	// Launch runs the command as one rank of a run started by mpirun,
	// srun or a Kubernetes Indexed Job.
	Launch LaunchOptions
	// token, when set, is the run's token (a launched run's own).
	token string
}

// isAgentFile reports whether f names a file the run reads on every host
// (marked fileIn, and not the coordinator's): the coordinator reads it and
// sends its content with the job, and an agent reads only that copy, never
// a path of its own host.
func isAgentFile(f *pflag.Flag) bool {
	dir := f.Annotations[fileAnnotation]
	return len(dir) == 1 && dir[0] == fileIn && !isCoordinatorFlag(f)
}

// agentPathAnnotation marks a flag that names a path of each host's own
// (a kept dataset): an agent refuses it unless it lies under an allowed
// root, before anything reads it; given with --storage, it names a key
// prefix in the store instead (the file store refuses "..").
const agentPathAnnotation = "fsbench-agent-path"

// markAgentPath marks cmd's flag name as naming a path on every host.
func markAgentPath(cmd *cobra.Command, name string) {
	_ = cmd.Flags().SetAnnotation(name, agentPathAnnotation, []string{"true"})
}

// isAgentPath reports whether f names a path on every host.
func isAgentPath(f *pflag.Flag) bool { return len(f.Annotations[agentPathAnnotation]) > 0 }

func addHostsFlags(cmd *cobra.Command, o *HostsOptions) {
	f := cmd.Flags()
	f.StringSliceVar(&o.Hosts, "hosts", nil, "run on these agents (`HOST:PORT,...`, each running `fsbench agent`) and merge their results")
	f.StringVar(&o.HostsFile, "hosts-file", "", "read the agents from `FILE`, one HOST:PORT a line, # starts a comment")
	f.StringVar(&o.TokenFile, "token-file", "", "with --hosts: the agents' token, from `FILE` (else FSBENCH_TOKEN)")
	f.StringVar(&o.TLSCA, "tls-ca", "", "with --hosts: talk HTTPS to the agents, trusting the CA certificates in this PEM `FILE`")
	f.BoolVar(&o.ReadOthers, "read-others", false, "with --hosts: host i reads what host i+1 wrote, so no client's own cache serves its reads")
	markFiles(f, fileIn, "hosts-file", "token-file", "tls-ca")
	addLaunchFlags(cmd, &o.Launch)
}

// active reports whether the command runs on many hosts.
func (o *HostsOptions) active() bool {
	return len(o.Hosts) > 0 || o.HostsFile != "" || o.Launch.env != nil
}

// resolve reads the host list and checks it.
func (o *HostsOptions) resolve(cmd *cobra.Command) error {
	f := cmd.Flags()
	if f.Changed("hosts") && len(o.Hosts) == 0 {
		return Usagef("--hosts names no agent: give HOST:PORT,... or leave --hosts out to run on this machine")
	}
	if f.Changed("hosts-file") && o.HostsFile == "" {
		return Usagef("--hosts-file names no file")
	}
	if o.Launch.env != nil {
		return o.resolveLaunched(cmd)
	}
	if !o.active() {
		for _, n := range []string{"token-file", "tls-ca", "read-others"} {
			if f.Changed(n) {
				return Usagef("--%s goes with --hosts or --hosts-file", n)
			}
		}
		return nil
	}
	if o.HostsFile != "" {
		data, err := os.ReadFile(o.HostsFile)
		if err != nil {
			return Usagef("--hosts-file: %v", sysio.PathCause(err))
		}
		more, err := ParseHosts(data)
		if err != nil {
			return Usagef("--hosts-file %s: %v", o.HostsFile, err)
		}
		o.Hosts = append(o.Hosts, more...)
	}
	seen := map[string]bool{}
	for _, h := range o.Hosts {
		if err := checkHostPort(h); err != nil {
			return Usagef("--hosts: %v", err)
		}
		if seen[h] {
			return Usagef("--hosts: %s is given twice", h)
		}
		seen[h] = true
	}
	if len(o.Hosts) == 0 {
		return Usagef("--hosts-file %s names no host", o.HostsFile)
	}
	if f.Lookup("access-log") != nil && f.Changed("access-log") {
		return Usagef("--access-log does not go with --hosts: the operations happen on the agents; run fsbench %s --access-log on one host to record them", cmd.Name())
	}
	if f.Lookup("journal") != nil && f.Changed("journal") {
		if err := journalOnHosts(f); err != nil {
			return err
		}
	}
	if o.ReadOthers && len(o.Hosts) < 2 {
		return Usagef("--read-others needs at least two hosts")
	}
	return nil
}

// journalOnHosts checks --journal of a run on many hosts: each agent
// writes its own, FILE.host-N on its host, so FILE is absolute (the same
// on every host, not relative to where each agent runs), and the run is
// one run, whose journals are not written again.
func journalOnHosts(f *pflag.FlagSet) error {
	if p := f.Lookup("journal").Value.String(); p != "" && !filepath.IsAbs(p) {
		return Usagef("--journal %s: with --hosts each host writes its own journal, FILE.host-N on that host: give an absolute path, off the storage under test", p)
	}
	for _, n := range []string{"repeat", "slo", "curve"} {
		if f.Lookup(n) != nil && f.Changed(n) && !(n == "repeat" && f.Lookup(n).Value.String() == "1") {
			return Usagef("--journal with --hosts journals one run: leave out --%s", n)
		}
	}
	return nil
}

// hostJournal is the journal host i of a run on many hosts writes, on
// its own host, for --journal file.
func hostJournal(file string, i int) string { return file + "." + cluster.HostDir(i) }

// ParseHosts reads a hosts file: one HOST:PORT a line; blank lines and
// what follows # are ignored.
func ParseHosts(data []byte) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if err := checkHostPort(line); err != nil {
			return nil, fmt.Errorf("line %d: %v", n, err)
		}
		out = append(out, line)
	}
	return out, sc.Err()
}

func checkHostPort(s string) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" || strings.ContainsAny(host, " /") {
		return fmt.Errorf("%q is not HOST:PORT", s)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("%q: port must be 1-65535", s)
	}
	return nil
}

// givenFlags calls fn with each flag of cmd given on its command line and
// its values (one, or a slice flag's every element).
func givenFlags(cmd *cobra.Command, fn func(f *pflag.Flag, values []string)) {
	cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if !f.Changed {
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			fn(f, sv.GetSlice())
			return
		}
		fn(f, []string{f.Value.String()})
	})
}

// agentArgs rebuilds the command's arguments for the agents: every flag
// the user gave that agents get (agentFlags), and the positional
// argument; files holds the content of the files the flags name, by the
// name given.
func agentArgs(cmd *cobra.Command, args []string) (out []string, files map[string][]byte, err error) {
	givenFlags(cmd, func(f *pflag.Flag, values []string) {
		if err != nil || isCoordinatorFlag(f) {
			return
		}
		if agentFlags[f.Name] != sentFlag {
			err = undecidedFlag(f)
			return
		}
		for _, v := range values {
			out = append(out, "--"+f.Name+"="+v)
			if isAgentFile(f) && v != "" {
				if files == nil {
					files = map[string][]byte{}
				}
				if files[v], err = os.ReadFile(v); err != nil {
					err = Usagef("--%s %s: %v", f.Name, v, sysio.PathCause(err))
				}
			}
		}
	})
	return append(out, args...), files, err
}

// localArgs is the command line an agent runs for a job whose arguments
// parsed into cmd: a coordinator's flag is refused, a flag naming a file
// points at the agent's copy of what the coordinator sent (files: the
// job's file names to the local copies), never at a path of the agent's
// host, and one naming a path of the host is checked by confine. The
// positional arguments follow a "--".
func localArgs(cmd *cobra.Command, files map[string]string, confine func(string) error) ([]string, error) {
	var out []string
	var err error
	givenFlags(cmd, func(f *pflag.Flag, values []string) {
		switch {
		case err != nil:
		case isCoordinatorFlag(f):
			err = fmt.Errorf("--%s is the coordinator's: an agent does not take it", f.Name)
		case agentFlags[f.Name] != sentFlag:
			err = undecidedFlag(f)
		case isAgentFile(f):
			for _, v := range values {
				local, ok := files[v]
				if !ok && v != "" {
					err = fmt.Errorf("--%s names a file the job does not carry", f.Name)
					return
				}
				out = append(out, "--"+f.Name+"="+local)
			}
		case isAgentPath(f) && f.Value.String() != "" && !cmd.Flags().Changed("storage"):
			// With --storage it is a key prefix in the store, not a path.
			if err = confine(f.Value.String()); err == nil {
				out = append(out, "--"+f.Name+"="+f.Value.String())
			}
		default:
			for _, v := range values {
				out = append(out, "--"+f.Name+"="+v)
			}
		}
	})
	return append(append(out, "--"), cmd.Flags().Args()...), err
}

// clusterRun is one command run on many hosts.
type clusterRun struct {
	command string
	hosts   *HostsOptions
	output  *OutputOptions
	ci      *CIOptions
	job     cluster.Job
	repeat  int  // --repeat: the job runs this many times, one after another
	secrets bool // the arguments carry credentials
	// left names what host i leaves behind in run when its agent is gone
	// before the clean-up.
	left func(run string, i int) string
	// finish, if set, completes each run's merged result; its error fails
	// the run as a merge error does.
	finish func(res *report.Result, parts []cluster.HostResult) error
	// judge, if set, judges the result of all runs before the
	// expectations are.
	judge func(res *report.Result) error
	// capacity, if set, is the search or curve (--slo, --curve) whose
	// every probe is a run on all the hosts, its rate split across them;
	// probes, if set, are the command's own part in them.
	capacity *capacityRun
	probes   probeHooks
	// journal is --journal: each host writes hostJournal(journal, i) on
	// its own host; journalOf is what the journals are verified against
	// (PATH, or the store's URL without credentials).
	journal, journalOf string
}

// clusterDriver runs the job on the agents, one run at a time.
type clusterDriver struct {
	c     *clusterRun
	app   *App
	coord *cluster.Coordinator
	bars  *hostsProgress
	ran   bool
}

// run runs the job once (a probe when pace is set) and merges the hosts'
// results into res.
func (d *clusterDriver) run(ctx context.Context, res *report.Result, pace *cluster.Pace) error {
	c := d.c
	if c.job.RunName == "" || c.probes == nil || !c.probes.oneRun() {
		c.job.RunName = runName() // each run its own directory or prefix on every host
	}
	c.job.Pace = pace
	if c.probes != nil && pace != nil {
		c.probes.pace(&c.job)
	}
	parts, err := d.coord.Run(ctx, c.job)
	d.bars.end()
	if parts == nil {
		return err
	}
	d.ran = true
	if merr := cluster.Merge(res, parts); merr != nil && err == nil {
		err = merr
	}
	hostWarnings(d.app, res, parts)
	if c.journal != "" && len(res.Phases) > 0 { // else no host began to write
		for i := range res.Hosts {
			res.Hosts[i].Journal = hostJournal(c.journal, i)
		}
	}
	if ctx.Err() != nil {
		res.Interrupted = true
	}
	if c.finish != nil {
		if ferr := c.finish(res, parts); ferr != nil && err == nil {
			err = ferr
		}
	}
	return err
}

// runCluster runs the command on the agents and reports the merged result
// as the command does on one host.
func runCluster(ctx context.Context, app *App, c *clusterRun) error {
	token, err := c.hosts.token, error(nil)
	if token == "" {
		token, err = readToken(app, c.hosts.TokenFile)
	}
	if err != nil {
		return err
	}
	client, scheme, err := agentClient(c.hosts.TLSCA)
	if err != nil {
		return err
	}
	if c.secrets && scheme != "https" {
		return Usagef("credentials reach agents only over TLS: give --tls-ca (and --tls-cert/--tls-key to the agents), or set ACCESS_KEY/SECRET_KEY in each agent's environment")
	}
	// The coordinator makes room in its open files itself, or fails
	// saying how many its hosts need (Coordinator.Run).
	c.job.ReadOthers = c.hosts.ReadOthers
	c.job.Seed = pattern.RandomSeed()
	bars := &hostsProgress{app: app, hosts: len(c.hosts.Hosts)}
	coord := &cluster.Coordinator{Hosts: c.hosts.Hosts, Token: token, Client: client, Scheme: scheme, Version: Version,
		Logf: func(f string, a ...any) { app.Infof(f, a...) }, Progress: bars.update, Verbose: app.Globals.Verbose}
	if c.left != nil {
		coord.Leftover = func(i int) string { return c.left(c.job.RunName, i) }
	}
	if b, ok := engine.WatcherFrom(ctx).(*prom.Board); ok {
		coord.Live = b // --metrics-listen: each host's live counts
	}
	if !app.Globals.Quiet {
		fmt.Fprintf(app.IO.Err, "Running %s on %s (%s)\n", c.command, units.Count(len(c.hosts.Hosts), "host"), cluster.HostList(c.hosts.Hosts, app.Globals.Verbose))
	}
	d := &clusterDriver{c: c, app: app, coord: coord, bars: bars}
	repeat := c.repeat
	if c.capacity != nil {
		repeat = 1 // each rate runs --repeat times instead
	}
	res, runErr := app.measure(ctx, c.command, repeat, func(ctx context.Context, res *report.Result) error {
		if c.capacity != nil {
			return d.capacity(ctx, res)
		}
		return d.run(ctx, res, nil)
	})
	if !d.ran { // nothing ran anywhere
		if errors.Is(runErr, cluster.ErrJobRefused) {
			return &UsageError{Err: fmt.Errorf("preflight: %w", runErr)}
		}
		return fmt.Errorf("preflight: %w", runErr)
	}
	c.tellJournals(app, res)
	if runErr == nil && c.judge != nil {
		runErr = c.judge(res)
	}
	if runErr != nil && !res.Interrupted {
		return app.writeFailed(res, c.output, runErr)
	}
	ciErr := app.finishCI(res, c.ci)
	if werr := app.writeResult(res, c.output); werr != nil {
		return werr
	}
	if res.Interrupted {
		return ErrInterrupted
	}
	if n := res.TotalErrors(); n > 0 && c.command == "objbench" {
		return fmt.Errorf("%d operations failed during the performance tests", n)
	}
	return ciErr
}

// tellJournals says where each host's journal is and how to verify
// them, once a phase ran (even if the run failed: a host killed mid-run
// keeps its journal too).
func (c *clusterRun) tellJournals(app *App, res *report.Result) {
	if c.journal == "" || app.Globals.Quiet || len(res.Phases) == 0 {
		return
	}
	var each []string
	for i, h := range c.hosts.Hosts {
		each = append(each, h+" "+hostJournal(c.journal, i))
	}
	what := "files"
	if c.command == "objbench" {
		what = "objects"
	}
	fmt.Fprintf(app.IO.Err, "Journal: one on each host: %s; the %s stay for, with the journals gathered on one machine: fsbench verify --journal '%s' %s\n",
		strings.Join(each, ", "), what, c.journal+".host-*", c.journalOf)
}

// fileRoom makes room for the files a process serving n agents opens
// (perAgent each: an agent's listener, its event stream and a connection
// for requests), raising its limit where it may, and warns when
// the limit stays too low: a run then fails with "too many open files".
func fileRoom(app *App, who string, n, perAgent int) {
	need := perAgent*n + 256
	if lim := sysio.OpenFileLimit(); lim == 0 || lim >= need {
		return
	}
	if got := sysio.RaiseOpenFileLimit(need); got != 0 && got < need {
		app.Warnf("%s needs about %d open files for %s and may open %d (ulimit -n): raise the limit, or the run fails with \"too many open files\"",
			who, need, units.Count(n, "agent"), got)
	}
}

// hostWarnings shows on stderr what each host warned of (its clean-up
// failures, what it keeps), named by the host, as a run on one host shows
// its own warnings; and what a host whose agent is gone left behind,
// which goes into the result too.
func hostWarnings(app *App, res *report.Result, parts []cluster.HostResult) {
	// Each warning once, with the hosts that gave it: a thousand hosts
	// without the right to drop caches make one line.
	var warned cluster.Causes
	for _, p := range parts {
		if p.Result != nil {
			for _, w := range p.Result.Warnings {
				warned.Add(p.Address, w)
			}
		}
	}
	for _, p := range parts {
		if p.Left != "" {
			warned.Add(p.Address, p.Left)
			res.Warnings = append(res.Warnings, fmt.Sprintf("host %s: %s", p.Address, p.Left))
		}
	}
	for _, line := range warned.Lines(func(a []string) string { return cluster.Few(a, app.Globals.Verbose) }) {
		app.Warnf("%s", line)
	}
}

// agentClient is the HTTP client to the agents: HTTPS trusting the given
// CA, or plain HTTP.
func agentClient(caFile string) (*http.Client, string, error) {
	tr := cluster.NewTransport()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	if caFile == "" {
		return client, "http", nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, "", Usagef("--tls-ca: %v", sysio.PathCause(err))
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, "", Usagef("--tls-ca %s: no PEM certificate in it", caFile)
	}
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return client, "https", nil
}

// runName is the run's directory (or key prefix) shared by all hosts.
func runName() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("fsbench-hosts-%d-%s", time.Now().Unix(), hex.EncodeToString(b[:]))
}

// benchCluster makes the run of bench (or a workload) on the agents.
func benchCluster(cmd *cobra.Command, args []string, o *BenchOptions) (*clusterRun, error) {
	c, err := o.newClusterRun("bench", cmd, args)
	if err != nil {
		return nil, err
	}
	c.left = runDirLeft(o.Path)
	c.capacity = o.capacityRun()
	c.journal, c.journalOf = o.Journal, o.Path
	if o.Job.Job == nil {
		c.job.Need = int64(o.Threads) * (o.BigFileSize + int64(o.SmallFileCount)*o.SmallFileSize)
	}
	return c, nil
}

// objbenchCluster makes the run of objbench on the agents.
func objbenchCluster(cmd *cobra.Command, args []string, o *ObjbenchOptions) (*clusterRun, error) {
	c, err := o.newClusterRun("objbench", cmd, args)
	if err != nil {
		return nil, err
	}
	c.secrets = storeSecrets(cmd, o.URL)
	c.capacity = o.capacityRun()
	c.journal, c.journalOf = o.JournalPath, journalURL(o.Storage, o.URL)
	if dir := objbenchTarget(o); dir != "" {
		c.left = runDirLeft(dir)
	} else {
		c.left = objectsLeft(o.URL, hostPrefix)
	}
	return c, nil
}

// storeSecrets reports whether a command line naming the store at url
// carries credentials to the agents: in the URL, or in the flags (a
// file's content travels with the job). Then the coordinator sends the
// job over TLS only; else each agent takes them from its own environment.
func storeSecrets(cmd *cobra.Command, url string) bool {
	secrets := object.RedactURL(url) != url
	for _, n := range []string{"secret-key", "session-token", "secret-key-file", "session-token-file"} {
		secrets = secrets || cmd.Flags().Changed(n)
	}
	return secrets
}

// hostPrefix is host i's own key prefix in the run's: RUN/host-i/.
func hostPrefix(run string, i int) string { return run + "/" + cluster.HostDir(i) + "/" }

// objectsLeft names what host i leaves behind in the store at url when
// its agent is gone before the clean-up: the objects under its prefix.
func objectsLeft(url string, prefix func(run string, i int) string) func(run string, i int) string {
	u := strings.TrimSuffix(object.RedactURL(url), "/")
	return func(run string, i int) string { return leftover.Objects(u + "/" + prefix(run, i)) }
}

// storeTarget is the local directory a command that may work in a store
// writes under: PATH without --storage, the directory of --storage file,
// none ("") in an object store.
func storeTarget(storage, path string) string {
	switch storage {
	case "":
		return path
	case "file":
		return strings.TrimPrefix(path, "file://")
	}
	return ""
}

// runDirLeft names what a host leaves behind under path: the run's
// directory there, which holds only that host's files once the others
// have removed theirs.
func runDirLeft(path string) func(run string, i int) string {
	return func(run string, _ int) string { return leftover.Dir(filepath.Join(path, run)) }
}
