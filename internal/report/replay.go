package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/units"
)

// ReplaySpeedLine says how a replay's time compares with the recording's:
// "ran 1.8x faster here than where it was recorded".
func ReplaySpeedLine(rp *Replay) string {
	if rp == nil || rp.Speedup == 0 {
		return ""
	}
	s := fmt.Sprintf("Replayed in %.3f s what took %.3f s where it was recorded: ", rp.Seconds, rp.RecordedSeconds)
	switch {
	case rp.Speed > 0:
		return s + fmt.Sprintf("paced at %.4gx the recorded speed (%.2fx its span)", rp.Speed, rp.Speedup)
	case rp.Speedup >= 1:
		return s + fmt.Sprintf("ran %.1fx faster here than where it was recorded", rp.Speedup)
	}
	return s + fmt.Sprintf("ran %.1fx slower here than where it was recorded", 1/rp.Speedup)
}

// writeReplay writes each type of operation of a replay beside the
// recording, the speed line and what was not replayed.
func writeReplay(w io.Writer, rp *Replay) error {
	if rp == nil {
		return nil
	}
	fmt.Fprintf(w, "Replay of %s (%s log, %s), replayed beside recorded:\n", rp.Log, rp.Format, units.Count(rp.Streams, "stream"))
	r2 := tw.AlignRight
	t := NewTable(w, []string{"OPERATION", "OPS", "REC OPS", "BYTES", "REC BYTES", "FAILED", "REC FAILED", "P50", "REC P50", "P99", "REC P99"},
		[]tw.Align{r2, r2, r2, r2, r2, r2, r2, r2, r2, r2, r2})
	lat := func(s metrics.Summary, v float64) string {
		if s.Count == 0 {
			return "-"
		}
		return units.FormatLatency(v)
	}
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, o := range rp.Ops {
		op := o.Op
		if o.Errors > 0 {
			op += fmt.Sprintf(" [%d differed]", o.Errors)
		}
		_ = t.Append([]string{op, n(o.Ops), n(o.Recorded.Ops), n(o.Bytes), n(o.Recorded.Bytes), n(o.Failed), n(o.Recorded.Failed),
			lat(o.Latency, o.Latency.P50), lat(o.Recorded.Latency, o.Recorded.Latency.P50),
			lat(o.Latency, o.Latency.P99), lat(o.Recorded.Latency, o.Recorded.Latency.P99)})
	}
	if err := t.Render(); err != nil {
		return err
	}
	if line := ReplaySpeedLine(rp); line != "" {
		fmt.Fprintln(w, line)
	}
	if line := notReplayedLine(rp); line != "" {
		fmt.Fprintln(w, line)
	}
	return nil
}

// notReplayedLine names what of the log was not replayed, and what the
// replay made that the log does not show.
func notReplayedLine(rp *Replay) string {
	var parts []string
	switch {
	case rp.Virtual > 0 && rp.Format == "strace":
		parts = append(parts, fmt.Sprintf("%d not on files (pipes, sockets, /proc, /dev, /sys)", rp.Virtual))
	case rp.Virtual > 0:
		parts = append(parts, fmt.Sprintf("%d on JuiceFS's virtual files", rp.Virtual))
	}
	for _, u := range rp.Unsupported {
		parts = append(parts, fmt.Sprintf("%d %s (not replayed)", u.Count, u.Op))
	}
	if rp.Malformed > 0 {
		parts = append(parts, fmt.Sprintf("%d malformed", rp.Malformed))
	}
	s := ""
	if len(parts) > 0 {
		s = fmt.Sprintf("Skipped of %d lines: %s.", rp.Lines, strings.Join(parts, ", "))
	}
	if rp.Prepared > 0 || rp.Emptied > 0 {
		if s != "" {
			s += " "
		}
		s += fmt.Sprintf("Made untimed: %d files and directories the log used without creating", rp.Prepared)
		if rp.Emptied > 0 {
			s += fmt.Sprintf("; %d directories emptied before their recorded rmdir", rp.Emptied)
		}
		s += "."
	}
	return s
}
