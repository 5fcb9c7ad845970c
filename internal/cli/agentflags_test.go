package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fsbench/fsbench/internal/cluster"
	"github.com/fsbench/fsbench/internal/train"
)

// treeDirFlag names a directory under PATH that an agent checks against
// its roots once the job is parsed (cluster.Prepared.Paths), as it does
// tree.dir of a workload file.
const treeDirFlag = "tree-dir"

// The commands that run on agents are one list: cli builds on an agent
// every command cluster.Commands names (which an agent's check reads) and
// no other, and every command of fsbench that takes --hosts is one of
// them, under its own name.
func TestAgentCommandsMatchCluster(t *testing.T) {
	app, _, _ := testApp(nil)
	for _, name := range cluster.Commands {
		c, ok := agentCommands[name]
		if !ok {
			t.Errorf("cluster.Commands names %s, which agentCommands (internal/cli/agentcmds.go) does not build", name)
			continue
		}
		var p cluster.Prepared
		if b, a := c.build(app).Name(), c.prepare(app, &cluster.Job{Command: name}, nil, &p).Name(); b != name || a != name {
			t.Errorf("agentCommands[%s] builds %s, and %s on an agent", name, b, a)
		}
	}
	if len(agentCommands) != len(cluster.Commands) {
		t.Errorf("agentCommands has %d commands, cluster.Commands %d: add the command to both", len(agentCommands), len(cluster.Commands))
	}
	for _, c := range NewRoot(app).Commands() {
		name := c.Name()
		if as, ok := coordinatedAs[name]; ok {
			name = as // it runs that command on the agents
		}
		if c.Flags().Lookup("hosts") != nil && !slices.Contains(cluster.Commands, name) {
			t.Errorf("%s takes --hosts but is not in cluster.Commands and agentCommands", c.Name())
		}
	}
}

// Every flag of every command an agent runs is decided (agentFlags): sent
// to the agents, or the coordinator's alone, which the coordinator does
// not send and an agent refuses. A flag that names a file or directory is
// the coordinator's, a file the job carries, or a path the agent confines
// to its roots. A new flag nobody decided fails here, saying where to.
func TestAgentFlagsDecided(t *testing.T) {
	app, _, _ := testApp(nil)
	r := &agentRunner{app: app}
	seen := map[string]bool{}
	for name, c := range agentCommands {
		var p cluster.Prepared
		for _, cmd := range []*cobra.Command{c.build(app), c.prepare(app, &cluster.Job{Command: name}, nil, &p)} {
			cmd.InitDefaultHelpFlag()
			cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
				if seen[name+" --"+f.Name] {
					return
				}
				seen[f.Name], seen[name+" --"+f.Name] = true, true
				checkAgentFlag(t, r, name, f, func() *cobra.Command { return c.build(app) })
			})
		}
	}
	for n := range agentFlags {
		if !seen[n] {
			t.Errorf("agentFlags decides --%s, which no command run on agents has: remove it", n)
		}
	}
}

// checkAgentFlag checks what becomes of flag f of command name, whose
// coordinator build makes.
func checkAgentFlag(t *testing.T, r *agentRunner, name string, f *pflag.Flag, build func() *cobra.Command) {
	t.Helper()
	arg := "--" + f.Name + "=" + f.DefValue
	placeholder, _ := pflag.UnquoteUsage(f)
	marked := f.Annotations[fileAnnotation]
	path := len(marked) > 0 || placeholder == "FILE" || placeholder == "DIR" || strings.HasSuffix(f.Name, "-file") && f.Value.Type() == "string"
	switch d := agentFlags[f.Name]; {
	case d == undecided:
		t.Errorf("%s --%s: decide whether agents get it: add it to the sentFlag or the coordinatorFlag names of agentFlags in internal/cli/agentcmds.go", name, f.Name)
		if _, _, err := agentArgs(parsed(t, build(), arg), nil); err == nil {
			t.Errorf("%s --%s: undecided, and yet sent", name, f.Name)
		}
	case d == coordinatorFlag:
		if sent := sentArgs(t, build(), arg); strings.Contains(sent, "--"+f.Name+"=") {
			t.Errorf("%s --%s: the coordinator's flag is sent: %s", name, f.Name, sent)
		}
		_, err := r.Prepare(&cluster.Job{Command: name, Args: []string{arg, "/data"}, RunName: "r", Hosts: 1}, nil, allowAll)
		if err == nil || !strings.Contains(err.Error(), "--"+f.Name) {
			t.Errorf("%s --%s: an agent takes the coordinator's flag: %v", name, f.Name, err)
		}
	case slices.Contains(marked, fileOut) && !isAgentPath(f):
		t.Errorf("%s --%s writes a file but is sent: an agent must not write where a job says, unless it confines the path to its roots (an agent path)", name, f.Name)
	case path && !isAgentFile(f) && !isAgentPath(f) && f.Name != treeDirFlag:
		t.Errorf("%s --%s names a %s but is sent as given: mark it fileIn (its content travels), make it the coordinator's or an agent path", name, f.Name, placeholder)
	default:
		if sent := sentArgs(t, build(), arg); !strings.Contains(sent, "--"+f.Name+"=") {
			t.Errorf("%s --%s is not sent to the agents: %s", name, f.Name, sent)
		}
	}
}

// A flag nobody decided is neither sent by the coordinator nor taken by
// an agent: each says which flag and where it is decided.
func TestUndecidedFlagRefused(t *testing.T) {
	app, _, _ := testApp(nil)
	build := func() *cobra.Command {
		cmd := newBenchCmdWith(app, func(context.Context, *BenchOptions) error { return nil })
		cmd.Flags().Int("frobs", 0, "a flag nobody decided")
		return cmd
	}
	_, _, err := agentArgs(parsed(t, build(), "--frobs=3"), nil)
	if err == nil || !strings.Contains(err.Error(), "--frobs") || !strings.Contains(err.Error(), "agentcmds.go") {
		t.Errorf("coordinator: %v", err)
	}
	check := parsed(t, build(), "--frobs=3")
	if _, err := localArgs(check, nil, allowAll); err == nil || !strings.Contains(err.Error(), "--frobs") {
		t.Errorf("agent: %v", err)
	}
}

// parsed is cmd with arg parsed.
func parsed(t *testing.T, cmd *cobra.Command, arg string) *cobra.Command {
	t.Helper()
	cmd.InitDefaultHelpFlag()
	if err := cmd.ParseFlags([]string{arg}); err != nil {
		t.Fatalf("%s %s: %v", cmd.Name(), arg, err)
	}
	return cmd
}

func allowAll(string) error { return nil }

// sentArgs is what the coordinator sends the agents for cmd given arg.
func sentArgs(t *testing.T, cmd *cobra.Command, arg string) string {
	t.Helper()
	out, _, err := agentArgs(parsed(t, cmd, arg), nil)
	if err != nil {
		t.Fatalf("%s %s: %v", cmd.Name(), arg, err)
	}
	return strings.Join(out, " ")
}

// A file flag reads the copy the job carries, under the agent's name for
// it; one naming a file the job does not carry is refused.
func TestAgentFileFlagReadsTheJobsCopy(t *testing.T) {
	root := t.TempDir()
	app, _, _ := testApp(nil)
	r := &agentRunner{app: app}
	preset, err := train.PresetText("resnet50", "h100")
	if err != nil {
		t.Fatal(err)
	}
	local := filepath.Join(t.TempDir(), "1-model.yaml")
	if err := os.WriteFile(local, preset, 0o600); err != nil {
		t.Fatal(err)
	}
	job := &cluster.Job{Command: "train", Args: []string{root, "--workload=/coordinator/model.yaml"}, RunName: "r", Hosts: 1}
	p, err := r.Prepare(job, map[string]string{"/coordinator/model.yaml": local}, allowAll)
	if err != nil {
		t.Fatal(err)
	}
	if o := p.(*agentJob[*TrainOptions]).o; o.JobFile != local {
		t.Errorf("train read %q, want the job's copy %q", o.JobFile, local)
	}
	for _, args := range [][]string{{root, "-f", "/etc/passwd"}, {root, "-f/etc/passwd"}, {root, "--workload", "/etc/passwd"}} {
		_, err := r.Prepare(&cluster.Job{Command: "train", Args: args, RunName: "r", Hosts: 1}, map[string]string{"/coordinator/model.yaml": local}, allowAll)
		if err == nil || !strings.Contains(err.Error(), "does not carry") || strings.Contains(err.Error(), "root:") {
			t.Errorf("%v: %v, want a refusal", args, err)
		}
	}
}

// The coordinator sends the content of the files its flags name, by the
// name given, and the flags as they were given.
func TestAgentArgsCarryFiles(t *testing.T) {
	dir := t.TempDir()
	wl := filepath.Join(dir, "w.yaml")
	if err := os.WriteFile(wl, []byte("phases: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	app, _, _ := testApp(nil)
	cmd := newBenchCmdWith(app, func(context.Context, *BenchOptions) error { return nil })
	if err := cmd.ParseFlags([]string{"-f", wl, "--hosts", "a:1", "/data"}); err != nil {
		t.Fatal(err)
	}
	args, files, err := agentArgs(cmd, cmd.Flags().Args())
	if err != nil || string(files[wl]) != "phases: []\n" || len(files) != 1 || !slices.Contains(args, "--job="+wl) {
		t.Fatalf("args %q, files %q, %v", args, files, err)
	}
	cmd = newBenchCmdWith(app, func(context.Context, *BenchOptions) error { return nil })
	_ = cmd.ParseFlags([]string{"-f", filepath.Join(dir, "none.yaml"), "/data"})
	if _, _, err := agentArgs(cmd, nil); err == nil || !strings.Contains(err.Error(), "none.yaml") {
		t.Errorf("a missing workload file: %v", err)
	}
}
