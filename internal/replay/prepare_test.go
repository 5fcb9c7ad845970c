package replay

import (
	"context"
	"testing"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
)

// TestPrepareFailureInItsRow: what an operation uses, made untimed just
// before it, cannot be made (a tmpfs out of inodes): the failure is an
// error of that operation's row, of its row beside the recording and
// among the differences, as the operation's own failure is, so the rows'
// errors add up to the replay's.
func TestPrepareFailureInItsRow(t *testing.T) {
	dir := testenv.MountFS(t, "tmpfs", "size=8m,nr_inodes=3") // its root, the run's directory, d
	log := writeLog(t,
		"2026.11.26 18:38:51.010003 [uid:0,gid:0,pid:7] mkdir (/d) - OK <0.000004>",
		"2026.11.26 18:38:51.010004 [uid:0,gid:0,pid:7] stat (/d/f) - OK <0.000004>")
	res := &report.Result{}
	_ = Run(context.Background(), Options{Log: log, Path: dir, DropCaches: "never"}, res)
	var all, rows int64
	for _, p := range res.Phases {
		if p.Name == "replay" {
			all = p.Errors
		} else {
			rows += p.Errors
		}
	}
	if all != 2 || rows != all {
		t.Errorf("the replay's errors %d, its rows' %d; want 2 each: %+v", all, rows, res.Phases)
	}
	if rp := res.Replay; rp == nil || len(rp.Ops) != 2 || rp.Ops[1].Op != "stat" || rp.Ops[1].Errors != 2 {
		t.Fatalf("replayed beside recorded: %+v", rp)
	}
	want := report.ErrorCount{Error: "stat: making what it uses first: no space left on device", Count: 1}
	if d := res.Replay.Differed; len(d) != 2 || d[0] != want && d[1] != want {
		t.Errorf("differences %+v, want among them %+v", d, want)
	}
}
