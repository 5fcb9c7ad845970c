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

// agentCommands builds each command an agent runs.
var agentCommands = map[string]func(*App) *cobra.Command{
	"bench": newBenchCmd, "objbench": newObjbenchCmd, "train": newTrainCmd, "checkpoint": newCheckpointCmd,
}

// treeDirFlag names a directory under PATH that an agent checks against
// its roots once the job is parsed (cluster.Prepared.Paths), as it does
// tree.dir of a workload file.
const treeDirFlag = "tree-dir"

// Every flag of every command an agent runs is either sent to the agents
// or the coordinator's alone, the one table (coordinatorFlags) read on
// both sides: the coordinator does not send the latter and an agent
// refuses it. A flag that names a file or directory is the coordinator's,
// a file the job carries, or a path the agent confines to its roots.
func TestAgentFlagsClassified(t *testing.T) {
	app, _, _ := testApp(nil)
	r := &agentRunner{app: app}
	for name, build := range agentCommands {
		cmd := build(app)
		cmd.InitDefaultHelpFlag()
		cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
			arg := "--" + f.Name + "=" + f.DefValue
			sent := sentArgs(t, build(app), arg)
			placeholder, _ := pflag.UnquoteUsage(f)
			marked := f.Annotations[fileAnnotation]
			path := len(marked) > 0 || placeholder == "FILE" || placeholder == "DIR" || strings.HasSuffix(f.Name, "-file") && f.Value.Type() == "string"
			switch {
			case coordinatorFlags[f.Name]:
				if strings.Contains(sent, "--"+f.Name+"=") {
					t.Errorf("%s --%s: the coordinator's flag is sent: %s", name, f.Name, sent)
				}
				_, err := r.Prepare(&cluster.Job{Command: name, Args: []string{arg, "/data"}, RunName: "r", Hosts: 1}, nil, allowAll)
				if err == nil || !strings.Contains(err.Error(), "--"+f.Name) {
					t.Errorf("%s --%s: an agent takes the coordinator's flag: %v", name, f.Name, err)
				}
			case slices.Contains(marked, fileOut):
				t.Errorf("%s --%s writes a file but is sent: an agent must not write where a job says", name, f.Name)
			case path && !isAgentFile(f) && !isAgentPath(f) && f.Name != treeDirFlag:
				t.Errorf("%s --%s names a %s but is sent as given: mark it fileIn (its content travels), make it the coordinator's or an agent path", name, f.Name, placeholder)
			case !strings.Contains(sent, "--"+f.Name+"="):
				t.Errorf("%s --%s is not sent to the agents: %s", name, f.Name, sent)
			}
		})
	}
}

func allowAll(string) error { return nil }

// sentArgs is what the coordinator sends the agents for cmd given arg.
func sentArgs(t *testing.T, cmd *cobra.Command, arg string) string {
	t.Helper()
	cmd.InitDefaultHelpFlag()
	if err := cmd.ParseFlags([]string{arg}); err != nil {
		t.Fatalf("%s %s: %v", cmd.Name(), arg, err)
	}
	out, _, err := agentArgs(cmd, nil)
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
