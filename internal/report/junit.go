package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/fsbench/fsbench/internal/units"
)

// FormatJUnit is JUnit XML, which CI systems (GitHub Actions reporters,
// GitLab, Jenkins) display as test results.
const FormatJUnit Format = "junit"

func init() {
	RegisterFormat(FormatJUnit, func(w io.Writer, r *Result, _ Options) error { return WriteJUnit(w, r) })
}

// JUnit XML elements, as the common schema (Ant/Jenkins/Surefire) has them.
type (
	// JUnitSuites is the document: one suite per run.
	JUnitSuites struct {
		XMLName xml.Name `xml:"testsuites"`
		Name    string   `xml:"name,attr"`
		JUnitCounts
		Time   string       `xml:"time,attr"`
		Suites []JUnitSuite `xml:"testsuite"`
	}
	// JUnitCounts are the test cases of a suite, and how they ended.
	JUnitCounts struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
		Skipped  int `xml:"skipped,attr"`
	}
	// JUnitSuite is one run of a command.
	JUnitSuite struct {
		Name string `xml:"name,attr"`
		JUnitCounts
		Time       string          `xml:"time,attr"`
		Timestamp  string          `xml:"timestamp,attr,omitempty"`
		Hostname   string          `xml:"hostname,attr,omitempty"`
		Properties []JUnitProperty `xml:"properties>property"`
		Cases      []JUnitCase     `xml:"testcase"`
		SystemErr  string          `xml:"system-err,omitempty"`
	}
	// JUnitProperty is one name=value of the run (version, target, parameters).
	JUnitProperty struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	// JUnitCase is one phase, functional check or expectation.
	JUnitCase struct {
		ClassName string        `xml:"classname,attr"`
		Name      string        `xml:"name,attr"`
		Time      string        `xml:"time,attr"`
		Failure   *JUnitProblem `xml:"failure"`
		Error     *JUnitProblem `xml:"error"`
		Skipped   *JUnitProblem `xml:"skipped"`
		SystemOut string        `xml:"system-out,omitempty"`
	}
	// JUnitProblem is a failure, an error or a skip, with its message.
	JUnitProblem struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr,omitempty"`
		Text    string `xml:",chardata"`
	}
)

// JUnit builds the JUnit document of r: one testsuite for the run, with one
// testcase per phase (failed when it had errors, an error when it did not
// complete), per functional check (failed, or skipped when not supported)
// and per expectation (failed with the measured value and the reason).
func JUnit(r *Result) *JUnitSuites {
	cmd := r.Command
	if cmd == "" {
		cmd = "run"
	}
	target := r.Target.Path
	if target == "" {
		target = r.Target.URL
	}
	s := JUnitSuite{
		Name:       strings.TrimSpace("fsbench " + cmd + " " + target),
		Time:       seconds(r.Usage.Seconds),
		Hostname:   r.Host.Name,
		Properties: junitProperties(r),
	}
	if !r.StartedAt.IsZero() {
		s.Timestamp = r.StartedAt.UTC().Format(time.RFC3339)
	}
	s.Cases = append(s.Cases, checkCases(cmd, r.Checks)...)
	s.Cases = append(s.Cases, phaseCases(cmd, r.Phases)...)
	s.Cases = append(s.Cases, expectationCases(cmd, r.Expectations)...)
	switch {
	case r.Interrupted:
		s.Cases = append(s.Cases, JUnitCase{ClassName: cmd, Name: "run", Time: seconds(r.Usage.Seconds),
			Error: &JUnitProblem{Message: "the run was interrupted; its results are partial", Type: "interrupted"}})
	case r.Error != "":
		s.Cases = append(s.Cases, JUnitCase{ClassName: cmd, Name: "run", Time: seconds(r.Usage.Seconds),
			Error: &JUnitProblem{Message: r.Error, Type: "error"}})
	}
	for _, c := range s.Cases {
		s.Tests++
		switch {
		case c.Failure != nil:
			s.Failures++
		case c.Error != nil:
			s.Errors++
		case c.Skipped != nil:
			s.Skipped++
		}
	}
	if len(r.Warnings) > 0 {
		s.SystemErr = "Warning: " + strings.Join(r.Warnings, "\nWarning: ")
	}
	return &JUnitSuites{Name: "fsbench", JUnitCounts: s.JUnitCounts, Time: s.Time, Suites: []JUnitSuite{s}}
}

// junitProperties are the run's settings that are set.
func junitProperties(r *Result) []JUnitProperty {
	var out []JUnitProperty
	prop := func(k, v string) {
		if v != "" {
			out = append(out, JUnitProperty{k, v})
		}
	}
	prop("fsbench.version", r.Version)
	prop("fsbench.schema_version", strconv.Itoa(r.SchemaVersion))
	prop("target.path", r.Target.Path)
	prop("target.url", r.Target.URL)
	prop("target.storage", r.Target.Storage)
	prop("target.fs_type", r.Target.FSType)
	prop("target.mount_source", r.Target.MountSource)
	prop("cache_drop", r.CacheDrop)
	for _, p := range r.Parameters {
		prop("parameters."+p.Key, fmt.Sprint(p.Value))
	}
	return out
}

// checkCases are the functional checks: failed, skipped when not
// supported, with a warning on their output.
func checkCases(cmd string, checks []Check) []JUnitCase {
	var out []JUnitCase
	for _, c := range checks {
		tc := JUnitCase{ClassName: cmd + ".functional." + c.Category, Name: c.Name, Time: seconds(0)}
		switch c.Status {
		case CheckFailed:
			tc.Failure = &JUnitProblem{Message: orDefault(c.Reason, "failed"), Type: "functional", Text: c.Reason}
		case CheckNotSupport:
			tc.Skipped = &JUnitProblem{Message: orDefault(c.Reason, CheckNotSupport)}
		case CheckWarning:
			tc.SystemOut = "warning: " + c.Reason
		}
		out = append(out, tc)
	}
	return out
}

// phaseCases are the phases: an error when incomplete, failed with errors.
func phaseCases(cmd string, phases []PhaseResult) []JUnitCase {
	var out []JUnitCase
	for _, p := range phases {
		tc := JUnitCase{ClassName: cmd + ".phase", Name: p.Name, Time: seconds(p.Seconds), SystemOut: phaseLine(p)}
		switch {
		case p.Incomplete:
			tc.Error = &JUnitProblem{Message: fmt.Sprintf("%s did not complete: %s", p.Name, phaseValue(p)), Type: "incomplete",
				Text: strings.Join(p.ErrorSamples, "\n")}
		case p.Errors > 0:
			tc.Failure = &JUnitProblem{Message: fmt.Sprintf("%d errors in %s", p.Errors, p.Name), Type: "errors",
				Text: strings.Join(p.ErrorSamples, "\n")}
		}
		out = append(out, tc)
	}
	return out
}

// expectationCases are the expectations, failed with the measured value
// and the reason, or skipped when the run was too short to judge them,
// saying what would make it judgeable.
func expectationCases(cmd string, exps []Expectation) []JUnitCase {
	var out []JUnitCase
	for _, e := range exps {
		tc := JUnitCase{ClassName: cmd + ".expectation", Name: e.Expr, Time: seconds(0),
			SystemOut: "measured: " + measured(e)}
		switch e.Outcome() {
		case VerdictTooShort:
			tc.Skipped = &JUnitProblem{Message: VerdictTooShort + ": " + orDefault(e.Reason, "too few samples")}
		case VerdictFail:
			tc.Failure = &JUnitProblem{Message: orDefault(e.Reason, "expectation failed"), Type: "expectation",
				Text: fmt.Sprintf("expectation: %s\nmeasured: %s\nwant: %s %s\nreason: %s",
					e.Expr, measured(e), e.Op, value(e.Want, e.Unit), e.Reason)}
		}
		out = append(out, tc)
	}
	return out
}

// WriteJUnit writes r as a JUnit XML document.
func WriteJUnit(w io.Writer, r *Result) error {
	bw := &ErrWriter{W: w}
	io.WriteString(bw, xml.Header)
	enc := xml.NewEncoder(bw)
	enc.Indent("", "  ")
	if err := enc.Encode(JUnit(r)); err != nil {
		return err
	}
	io.WriteString(bw, "\n")
	return bw.Err()
}

func seconds(s float64) string { return strconv.FormatFloat(s, 'f', 3, 64) }

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func value(v float64, unit string) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if unit != "" {
		s += " " + unit
	}
	return s
}

func measured(e Expectation) string { return value(e.Measured, e.Unit) }

func phaseValue(p PhaseResult) string {
	return FormatMeasure(p.Value) + ", " + FormatMeasure(p.Cost)
}

// phaseLine is what a phase measured, in one line.
func phaseLine(p PhaseResult) string {
	s := fmt.Sprintf("%s (%s): %s", p.Title, p.Name, phaseValue(p))
	if l := p.Latency; l.Count > 0 {
		s += fmt.Sprintf("; latency of %s: p50 %s, p90 %s, p99 %s, p99.9 %s, max %s", orDefault(p.LatencyOf, "one op"),
			units.FormatLatency(l.P50), units.FormatLatency(l.P90), units.FormatLatency(l.P99), units.FormatLatency(l.P999), units.FormatLatency(l.Max))
	}
	return s + fmt.Sprintf("; %d ops, %d items, %d bytes, %d errors in %.3f s", p.Ops, p.Items, p.Bytes, p.Errors, p.Seconds)
}
