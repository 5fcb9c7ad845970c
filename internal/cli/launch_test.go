package cli

import (
	"context"
	"strings"
	"testing"
)

// runRoot runs the whole command line as main does, with env as the
// environment, and returns the exit code, stdout and stderr with the error.
func runRoot(env map[string]string, args ...string) (int, string, string) {
	app, out, errb := testApp(env)
	_, err := execute(context.Background(), NewRoot(app), args)
	if err != nil {
		errb.WriteString("Error: " + err.Error())
	}
	return ExitCode(err), out.String(), errb.String()
}

var ompiRank1of2 = map[string]string{"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2", "OMPI_MCA_ess_base_jobid": "99"}

func TestLauncherUsage(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"bench", dir, "--launcher", "mpi"}, "no rank in the environment"},
		{nil, []string{"bench", dir, "--launcher", "k8s"}, "JOB_COMPLETION_INDEX is not set"},
		{nil, []string{"bench", dir, "--launcher", "pbs"}, `--launcher "pbs": want one of auto, none, mpi, slurm, k8s`},
		{ompiRank1of2, []string{"bench", dir, "--launcher", "mpi", "--hosts", "127.0.0.1:7781"}, "--launcher mpi and --hosts"},
		{nil, []string{"bench", dir, "--launcher", "none", "--world-size", "3"}, "--world-size goes with a launcher"},
		{ompiRank1of2, []string{"bench", dir, "--token-file", "/etc/passwd"}, "--token-file goes with --hosts"},
		{ompiRank1of2, []string{"bench", dir, "--rendezvous-timeout", "0s"}, "--rendezvous-timeout 0s"},
		{ompiRank1of2, []string{"bench", dir + "/missing"}, dir + "/missing: no such file or directory; the ranks meet in a directory every rank sees"},
		{ompiRank1of2, []string{"bench", dir, "--rendezvous", "/etc/passwd"}, "rendezvous /etc/passwd: not a directory;"},
		{ompiRank1of2, []string{"objbench", "--storage", "file", dir}, "objbench does not run under a launcher"},
		{ompiRank1of2, []string{"train", "--storage", "file", dir}, "train --storage does not run under a launcher"},
		{ompiRank1of2, []string{"checkpoint", "--storage", "minio", "http://127.0.0.1:1/b"}, "checkpoint --storage does not run under a launcher"},
		{map[string]string{"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "2"}, []string{"bench", dir}, "is not below the world size 2"},
	}
	for _, c := range cases {
		code, _, errs := runRoot(c.env, c.args...)
		if code != ExitUsage || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%v with %v: exit %d, %q; want 2 and one line with %q", c.args, c.env, code, errs, c.want)
		}
	}
}

// TestLauncherNoneIsPlain: with --launcher none, a process that mpirun's
// variables call rank 1 of 2 runs on its own at once, as without them;
// and so does a one-rank world. Without the flag, rank 1 waits for rank 0.
func TestLauncherNoneIsPlain(t *testing.T) {
	dir := t.TempDir()
	small := []string{"-p", "1", "--big-file-size", "1M", "--small-file-count", "2", "-o", "json", "--drop-caches", "never"}
	one := map[string]string{"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "1", "OMPI_MCA_ess_base_jobid": "98"}
	for _, run := range []struct {
		env  map[string]string
		args []string
	}{{ompiRank1of2, []string{"--launcher", "none"}}, {one, nil}} {
		code, out, errs := runRoot(run.env, append(append([]string{"bench", dir}, small...), run.args...)...)
		if code != 0 || !strings.Contains(out, `"write-big"`) || strings.Contains(errs, "rank") || strings.Contains(out, `"hosts"`) {
			t.Errorf("%v: exit %d, a many-host run or no result:\n%s\n%s", run.args, code, out, errs)
		}
	}
	code, _, errs := runRoot(ompiRank1of2, append([]string{"bench", dir, "--rendezvous-timeout", "200ms"}, small...)...)
	if code != ExitRuntime || !strings.Contains(errs, "rank 0 of 2 did not open the rendezvous") {
		t.Errorf("rank 1 of 2 alone: exit %d: %s", code, errs)
	}
}
