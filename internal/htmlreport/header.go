package htmlreport

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/pkg/object"
)

// runView is the header of one result.
type runView struct {
	Name   string
	Colour int // index of the result's series colour
	Status cell
	Fields []field
}

// field is one labelled line of a header.
type field struct {
	Label, Value string
	Mono         bool // shown in a fixed-width font (command lines, paths)
}

func (in *input) runs() []runView {
	out := make([]runView, len(in.results))
	for i, r := range in.results {
		out[i] = runView{Name: in.names[i], Colour: i % paletteSize, Status: runStatus(r), Fields: runFields(r)}
		if r.SchemaVersion < 2 {
			in.notes = append(in.notes, fmt.Sprintf("%s is a version-%d result without latency histograms: its percentile curves are drawn from the stored summary points (p50, p90, p99, p99.9, max).",
				in.names[i], r.SchemaVersion))
		}
	}
	return out
}

// sharedParams is what the page's header says of the parameters: those of
// every result when they are the same (with the phases of a workload),
// nothing when they differ, which each comparison's warnings then name.
func (in *input) sharedParams() string {
	text := func(r *report.Result) string {
		t := paramText(r.Parameters)
		if r.Parameters.Get("workload") != nil {
			if ph := phaseText(r.Phases); ph != "" {
				t += "; phases: " + ph
			}
		}
		return t
	}
	first := text(in.results[0])
	for _, r := range in.results[1:] {
		if text(r) != first {
			return ""
		}
	}
	if first == "" {
		return ""
	}
	return "Parameters: " + first
}

func runStatus(r *report.Result) cell {
	switch {
	case r.Error != "":
		return cell{Text: "failed: " + r.Error, Class: "bad"}
	case r.Interrupted:
		return cell{Text: "interrupted: figures are partial", Class: "warn"}
	}
	return cell{Text: "finished", Class: "good"}
}

func runFields(r *report.Result) []field {
	var out []field
	add := func(label, value string, mono bool) {
		if value != "" {
			out = append(out, field{label, value, mono})
		}
	}
	cmd := RedactCommandLine(r.CommandLine)
	if cmd == "" {
		cmd = "fsbench " + r.Command + " (command line not recorded)"
	}
	add("Command", cmd, true)
	add("fsbench", fmt.Sprintf("%s (result schema %d)", r.Version, r.SchemaVersion), false)
	if !r.StartedAt.IsZero() {
		add("Started", r.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC"), false)
	}
	h := r.Host
	add("Host", hostLine(h), false)
	for _, a := range r.Hosts {
		add("Agent "+a.Address, hostLine(a.Host)+", fsbench "+a.Version, false)
	}
	t := r.Target
	add("Path", t.Path, true)
	add("Object store", object.RedactURL(t.URL), true)
	add("Storage", t.Storage, false)
	add("File system", t.FSType, false)
	add("Mount point", t.MountPoint, true)
	add("Mount source", object.RedactURL(t.MountSource), true)
	add("Mount options", redactOptions(t.MountOptions), true)
	add("Parameters", paramText(r.Parameters), false)
	if r.Parameters.Get("workload") != nil {
		add("Phases", phaseText(r.Phases), false)
	}
	if n := len(r.Runs); n > 1 {
		add("Runs", fmt.Sprintf("%d (--repeat): figures are medians over the runs, latencies from all their samples", n), false)
	}
	add("Cache drop", r.CacheDrop, false)
	if u := r.Usage; u.Seconds > 0 {
		add("fsbench used", fmt.Sprintf("%.1f s, CPU %.0f%%, peak memory %s", u.Seconds, u.CPUPercent, units.FormatBytes(u.PeakRSSBytes)), false)
	}
	return out
}

func hostLine(h report.Host) string {
	parts := []string{}
	for _, s := range []string{h.OS + "/" + h.Arch, h.Kernel} {
		if s != "" && s != "/" {
			parts = append(parts, s)
		}
	}
	if h.CPUs > 0 {
		parts = append(parts, strconv.Itoa(h.CPUs)+" CPUs")
	}
	if len(parts) == 0 {
		return h.Name
	}
	return h.Name + " (" + strings.Join(parts, ", ") + ")"
}

// paramText lists the parameters as "label: value". Parameters read from a
// JSON file carry no display text: sizes are then shown with a unit.
func paramText(ps report.Params) string {
	var parts []string
	for _, p := range ps {
		label, d := p.Label, p.Display
		if label == "" {
			label = p.Key
		}
		if n, ok := p.Value.(json.Number); ok && strings.Contains(p.Key, "size") {
			if v, err := n.Int64(); err == nil && v > 0 {
				d = units.FormatBytes(v)
			}
		}
		if d == "" && p.Value != nil {
			d = fmt.Sprint(p.Value)
		}
		if strings.TrimSpace(d) == "" {
			continue // unset: nothing to say
		}
		parts = append(parts, label+": "+d)
	}
	return strings.Join(parts, ", ")
}

// phaseText lists what each phase of a workload did: what one operation
// moved (its transfer or file size) and for how long it ran, which a
// workload file sets per phase and the parameters do not hold.
func phaseText(ps []report.PhaseResult) string {
	var parts []string
	for _, p := range ps {
		var what []string
		if p.LatencyOf != "" {
			what = append(what, p.LatencyOf)
		}
		if p.Seconds > 0 {
			what = append(what, strconv.FormatFloat(p.Seconds, 'f', 1, 64)+" s")
		}
		if len(what) > 0 {
			parts = append(parts, p.Name+" ("+strings.Join(what, ", ")+")")
		}
	}
	return strings.Join(parts, "; ")
}

// secretFlags are flags whose value is a credential.
var secretFlags = []string{"--secret-key", "--session-token", "--access-key", "--token"}

// RedactCommandLine removes credentials from a command line: the values of
// credential flags and the user information of URLs. Results keep their
// command lines redacted already; the report does it again so that a
// result written by hand or by another tool cannot leak one.
func RedactCommandLine(s string) string {
	fields := strings.Fields(s)
	for i, f := range fields {
		for _, flag := range secretFlags {
			switch {
			case f == flag && i+1 < len(fields):
				fields[i+1] = object.Redacted
			case strings.HasPrefix(f, flag+"="):
				fields[i] = flag + "=" + object.Redacted
			}
		}
		if strings.ContainsAny(fields[i], "@?") {
			fields[i] = redactToken(fields[i])
		}
	}
	return strings.Join(fields, " ")
}

// redactToken redacts user information in a word that holds a URL,
// possibly after a flag's "=".
func redactToken(w string) string {
	if i := strings.Index(w, "="); i >= 0 && strings.HasPrefix(w, "-") {
		return w[:i+1] + object.RedactURL(w[i+1:])
	}
	return object.RedactURL(w)
}

// redactOptions hides the values of mount options that look like
// credentials (password=, secret=, token=, ...).
func redactOptions(s string) string {
	opts := strings.Split(s, ",")
	for i, o := range opts {
		k, _, ok := strings.Cut(o, "=")
		lk := strings.ToLower(k)
		if ok && (strings.Contains(lk, "pass") || strings.Contains(lk, "secret") || strings.Contains(lk, "token") || strings.Contains(lk, "key")) {
			opts[i] = k + "=" + object.Redacted
		}
	}
	return strings.Join(opts, ",")
}
