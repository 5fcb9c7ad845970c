package htmlreport

import (
	"fmt"
	"strconv"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/units"
)

// checkKey names one functional check.
type checkKey struct{ category, name string }

func (in *input) checksSection() (section, error) {
	s := section{ID: "checks", Title: "Functional checks",
		Intro: "objbench's checks of the object store: pass, failed, warning (a known difference between providers) or not support (an optional capability the store lacks)."}
	var keys []checkKey
	found := map[checkKey]bool{}
	status := make([]map[checkKey]report.Check, len(in.results))
	for j, r := range in.results {
		status[j] = map[checkKey]report.Check{}
		for _, c := range r.Checks {
			k := checkKey{c.Category, c.Name}
			status[j][k] = c
			if !found[k] {
				found[k] = true
				keys = append(keys, k)
			}
		}
	}
	if len(keys) == 0 {
		return s, nil
	}
	// Only the results that have checks get a column.
	var cols []int
	t := table{Head: []string{"Category", "Check"}}
	for j, r := range in.results {
		if len(r.Checks) > 0 {
			cols = append(cols, j)
			t.Head = append(t.Head, in.names[j])
		}
	}
	for _, k := range keys {
		row := []cell{{Text: k.category}, {Text: k.name}}
		for _, j := range cols {
			c, ok := status[j][k]
			if !ok {
				row = append(row, cell{Text: "-"})
				continue
			}
			text := c.Status
			if c.Reason != "" {
				text += ": " + c.Reason
			}
			row = append(row, cell{Text: text, Class: checkClass(c.Status)})
		}
		t.Rows = append(t.Rows, row)
	}
	b := block{Title: "Check matrix", Notes: in.checkCounts(), Tables: []table{t}}
	s.Blocks = append(s.Blocks, b)
	return s, nil
}

func checkClass(status string) string {
	switch status {
	case report.CheckPass:
		return "good"
	case report.CheckFailed:
		return "bad"
	}
	return "warn"
}

// checkCounts says per result how many checks ended in each status.
func (in *input) checkCounts() []string {
	var out []string
	for j, r := range in.results {
		if len(r.Checks) == 0 {
			continue
		}
		n := map[string]int{}
		for _, c := range r.Checks {
			n[c.Status]++
		}
		out = append(out, fmt.Sprintf("%s: pass %d, failed %d, warning %d, not support %d.", in.names[j],
			n[report.CheckPass], n[report.CheckFailed], n[report.CheckWarning], n[report.CheckNotSupport]))
	}
	return out
}

func (in *input) internalSection() (section, error) {
	s := section{ID: "internal", Title: "Storage client internals",
		Intro: "What the storage client itself counted during the run (for JuiceFS, the deltas of its .stats file)."}
	for j, r := range in.results {
		x := r.Internal
		if x == nil {
			continue
		}
		b := block{Title: in.names[j] + ": " + x.Source}
		cpu, mem := "unknown", "unknown"
		if x.ClientCPUPercent != nil {
			cpu = strconv.FormatFloat(*x.ClientCPUPercent, 'f', 1, 64) + "%"
		}
		if x.ClientMemoryBytes != nil {
			mem = units.FormatBytes(*x.ClientMemoryBytes)
		}
		b.Notes = append(b.Notes, fmt.Sprintf("Client CPU: %s, memory: %s.", cpu, mem))
		t := table{Head: []string{"Item", "Operations", "Mean latency"}}
		for _, row := range x.Rows {
			if row.Unknown {
				t.Rows = append(t.Rows, []cell{{Text: row.Name}, {Text: "unknown", Num: true}, {Text: "unknown (the counter went backwards)", Num: true, Class: "warn"}})
				continue
			}
			t.Rows = append(t.Rows, []cell{{Text: row.Name}, {Text: strconv.FormatInt(row.Count, 10), Num: true},
				{Text: strconv.FormatFloat(row.AvgMs, 'f', 2, 64) + " ms/op", Num: true, Class: gradeClass(row.Grade)}})
		}
		b.Tables = append(b.Tables, t)
		s.Blocks = append(s.Blocks, b)
	}
	return s, nil
}

func gradeClass(g report.Grade) string {
	switch g {
	case report.Good:
		return "good"
	case report.Fair:
		return "warn"
	case report.Poor:
		return "bad"
	}
	return ""
}

func (in *input) expectationsSection() (section, error) {
	s := section{ID: "expectations", Title: "Expectations",
		Intro: "The --expect clauses (and --baseline regressions) of each run and their outcome."}
	for j, r := range in.results {
		if len(r.Expectations) == 0 {
			continue
		}
		t := table{Head: []string{"Expectation", "Measured", "Result"}}
		pass, short := 0, 0
		for _, e := range r.Expectations {
			res := cell{Text: "pass", Class: "good"}
			switch e.Outcome() {
			case report.VerdictPass:
				pass++
			case report.VerdictTooShort:
				short++
				res = cell{Text: report.VerdictTooShort, Class: "warn"}
			default:
				res = cell{Text: "FAIL", Class: "bad"}
			}
			if res.Class != "good" && e.Reason != "" {
				res.Text += ": " + e.Reason
			}
			t.Rows = append(t.Rows, []cell{{Text: e.Expr}, {Text: strconv.FormatFloat(e.Measured, 'f', -1, 64) + " " + e.Unit, Num: true}, res})
		}
		note := fmt.Sprintf("%d of %d expectations met.", pass, len(r.Expectations))
		if short > 0 {
			note = fmt.Sprintf("%d of %d expectations met, %d too short to judge.", pass, len(r.Expectations), short)
		}
		s.Blocks = append(s.Blocks, block{Title: in.names[j], Notes: []string{note}, Tables: []table{t}})
	}
	return s, nil
}

func (in *input) problemsSection() (section, error) {
	s := section{ID: "problems", Title: "Errors and warnings",
		Intro: "What went wrong or deserves a look: the run's error, phases that did not complete or had failed operations (with the first messages), and the warnings printed during the run."}
	for j, r := range in.results {
		t := table{Head: []string{"Kind", "Where", "Message"}}
		if r.Error != "" {
			t.Rows = append(t.Rows, []cell{{Text: "error", Class: "bad"}, {Text: "run"}, {Text: r.Error}})
		}
		if r.Interrupted {
			t.Rows = append(t.Rows, []cell{{Text: "interrupted", Class: "warn"}, {Text: "run"}, {Text: "the run was interrupted; its figures are partial"}})
		}
		for _, p := range r.Phases {
			t.Rows = append(t.Rows, phaseProblems(p)...)
		}
		for _, run := range r.Runs {
			where := fmt.Sprintf("run %d of %d", run.Index, len(r.Runs))
			if run.Error != "" {
				t.Rows = append(t.Rows, []cell{{Text: "error", Class: "bad"}, {Text: where}, {Text: run.Error}})
			}
			if run.Interrupted {
				t.Rows = append(t.Rows, []cell{{Text: "interrupted", Class: "warn"}, {Text: where}, {Text: "the run was interrupted; the medians are over the runs that have each phase"}})
			}
		}
		for _, w := range r.Warnings {
			t.Rows = append(t.Rows, []cell{{Text: "warning", Class: "warn"}, {Text: "run"}, {Text: w}})
		}
		if len(t.Rows) == 0 {
			continue
		}
		t.Long = len(t.Rows) > 16
		s.Blocks = append(s.Blocks, block{Title: in.names[j], Tables: []table{t}})
	}
	return s, nil
}

func phaseProblems(p report.PhaseResult) [][]cell {
	var rows [][]cell
	if p.Incomplete {
		rows = append(rows, []cell{{Text: "incomplete", Class: "warn"}, {Text: p.Name}, {Text: "the phase did not complete; its figures are partial"}})
	}
	if p.Errors > 0 {
		rows = append(rows, []cell{{Text: "errors", Class: "bad"}, {Text: p.Name}, {Text: fmt.Sprintf("%d operations failed", p.Errors)}})
	}
	for _, e := range p.ErrorSamples {
		rows = append(rows, []cell{{Text: "error", Class: "bad"}, {Text: p.Name}, {Text: e}})
	}
	for _, h := range p.Hosts {
		if h.Error != "" {
			rows = append(rows, []cell{{Text: "host error", Class: "bad"}, {Text: p.Name + " on " + h.Address}, {Text: h.Error}})
		}
	}
	return rows
}
