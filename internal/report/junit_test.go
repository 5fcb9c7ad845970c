package report

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/metrics"
)

// junitDoc is an independent reading of JUnit XML: what a CI system parses.
type junitDoc struct {
	XMLName xml.Name `xml:"testsuites"`
	Tests   int      `xml:"tests,attr"`
	Suites  []struct {
		Name       string `xml:"name,attr"`
		Tests      int    `xml:"tests,attr"`
		Failures   int    `xml:"failures,attr"`
		Errors     int    `xml:"errors,attr"`
		Skipped    int    `xml:"skipped,attr"`
		Timestamp  string `xml:"timestamp,attr"`
		Properties []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Cases []struct {
			ClassName string `xml:"classname,attr"`
			Name      string `xml:"name,attr"`
			Time      string `xml:"time,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
		SystemErr string `xml:"system-err"`
	} `xml:"testsuite"`
}

func junitResult() *Result {
	return &Result{
		SchemaVersion: SchemaVersion, Tool: "fsbench", Version: "v1.2.3", Command: "objbench",
		StartedAt:  time.Date(2026, 11, 21, 3, 0, 0, 0, time.UTC),
		Host:       Host{Name: "ci-runner"},
		Target:     Target{URL: "http://127.0.0.1:9000/ci", Storage: "minio"},
		Parameters: Params{{Key: "threads", Value: 4}, {Key: "big_object_size", Value: 16 << 20}},
		Checks: []Check{
			{Category: "basic", Name: "put an object", Status: CheckPass},
			{Category: "basic", Name: "get partial object", Status: CheckWarning, Reason: "range past the end"},
			{Category: "sync", Name: "change owner/group", Status: CheckNotSupport},
			{Category: "basic", Name: "list objects", Status: CheckFailed, Reason: "listed 2 of 3 keys"},
		},
		Phases: []PhaseResult{
			{Name: "upload", Title: "Upload objects", Seconds: 1.25, Ops: 16, Items: 4, Value: Measure{Value: 51.2, Unit: "MiB/s"}, Cost: Measure{Value: 0.31, Unit: "s/object"},
				LatencyOf: "4 MiB part", Latency: metrics.Summary{Count: 16, P50: 1000, P90: 2000, P99: 3000, P999: 3000, Max: 3000}},
			{Name: "download", Title: "Download objects", Seconds: 0.5, Errors: 2, ErrorSamples: []string{"get k1: EOF", "get k2: EOF"},
				Value: Measure{Value: 80, Unit: "MiB/s"}, Cost: Measure{Value: 0.2, Unit: "s/object"}},
			{Name: "put-small", Title: "Put small objects", Seconds: 0.2, Incomplete: true, Value: Measure{Value: 100, Unit: "objects/s"}},
		},
		Expectations: []Expectation{
			{Expr: "upload>=50MiB/s", Metric: "upload", Op: ">=", Want: 50, Unit: "MiB/s", Measured: 51.2, Pass: true},
			{Expr: "download.p99<1ms", Metric: "download.p99", Op: "<", Want: 1, Unit: "ms", Measured: 4.5, Reason: "4.5 ms is not < 1 ms"},
			{Expr: "upload.p99<5ms", Metric: "upload.p99", Op: "<", Want: 5, Unit: "ms", Measured: 3, Pass: true, Verdict: VerdictTooShort,
				Reason: "16 latency samples, p99 needs 1000: a longer run or --repeat"},
		},
		Usage:       Usage{Seconds: 3.5},
		Interrupted: true,
		Warnings:    []string{"bucket & <prefix> kept"},
	}
}

func TestJUnitParsesBack(t *testing.T) {
	if _, err := ParseFormat("junit"); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, junitResult(), FormatJUnit, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), `<?xml version="1.0" encoding="UTF-8"?>`) {
		t.Errorf("no XML header:\n%s", buf.String())
	}
	var doc junitDoc
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, buf.String())
	}
	if len(doc.Suites) != 1 {
		t.Fatalf("%d testsuites, want 1", len(doc.Suites))
	}
	s := doc.Suites[0]
	// 4 checks + 3 phases + 3 expectations + the interrupted run; the
	// expectation too short to judge is skipped, saying why.
	if s.Name != "fsbench objbench http://127.0.0.1:9000/ci" || s.Tests != 11 || doc.Tests != 11 ||
		s.Failures != 3 || s.Errors != 2 || s.Skipped != 2 || s.Timestamp != "2026-11-21T03:00:00Z" {
		t.Errorf("suite %s: tests %d failures %d errors %d skipped %d at %s", s.Name, s.Tests, s.Failures, s.Errors, s.Skipped, s.Timestamp)
	}
	props := map[string]string{}
	for _, p := range s.Properties {
		props[p.Name] = p.Value
	}
	if props["fsbench.version"] != "v1.2.3" || props["parameters.threads"] != "4" || props["target.storage"] != "minio" {
		t.Errorf("properties %v", props)
	}
	type want struct{ class, name, failure, error, skipped, out string }
	wants := []want{
		{"objbench.functional.basic", "put an object", "", "", "", ""},
		{"objbench.functional.basic", "get partial object", "", "", "", "warning: range past the end"},
		{"objbench.functional.sync", "change owner/group", "", "", "not support", ""},
		{"objbench.functional.basic", "list objects", "listed 2 of 3 keys", "", "", ""},
		{"objbench.phase", "upload", "", "", "", "Upload objects (upload): 51.20 MiB/s"},
		{"objbench.phase", "download", "2 errors in download", "", "", "80.00 MiB/s"},
		{"objbench.phase", "put-small", "", "put-small did not complete", "", ""},
		{"objbench.expectation", "upload>=50MiB/s", "", "", "", "measured: 51.2 MiB/s"},
		{"objbench.expectation", "download.p99<1ms", "4.5 ms is not < 1 ms", "", "", "measured: 4.5 ms"},
		{"objbench.expectation", "upload.p99<5ms", "", "", "too short to judge: 16 latency samples, p99 needs 1000: a longer run or --repeat", "measured: 3 ms"},
		{"objbench", "run", "", "interrupted", "", ""},
	}
	if len(s.Cases) != len(wants) {
		t.Fatalf("%d testcases, want %d", len(s.Cases), len(wants))
	}
	for i, w := range wants {
		c := s.Cases[i]
		if c.ClassName != w.class || c.Name != w.name {
			t.Errorf("case %d: %s / %s, want %s / %s", i, c.ClassName, c.Name, w.class, w.name)
		}
		check := func(what, got, want string) {
			if want == "" && got != "" || !strings.Contains(got, want) {
				t.Errorf("case %s: %s %q, want %q", w.name, what, got, want)
			}
		}
		var f, e, sk string
		if c.Failure != nil {
			f = c.Failure.Message
		}
		if c.Error != nil {
			e = c.Error.Message
		}
		if c.Skipped != nil {
			sk = c.Skipped.Message
		}
		check("failure", f, w.failure)
		check("error", e, w.error)
		check("skipped", sk, w.skipped)
		if !strings.Contains(c.SystemOut, w.out) {
			t.Errorf("case %s: system-out %q, want %q", w.name, c.SystemOut, w.out)
		}
	}
	if f := s.Cases[8].Failure; f.Type != "expectation" || !strings.Contains(f.Text, "measured: 4.5 ms") || !strings.Contains(f.Text, "want: < 1 ms") {
		t.Errorf("expectation failure %+v", f)
	}
	if f := s.Cases[5].Failure; !strings.Contains(f.Text, "get k1: EOF") {
		t.Errorf("error samples missing: %+v", f)
	}
	if s.Cases[4].Time != "1.250" {
		t.Errorf("phase time %q", s.Cases[4].Time)
	}
	if s.SystemErr != "Warning: bucket & <prefix> kept" {
		t.Errorf("system-err %q", s.SystemErr)
	}
}

func TestJUnitEmptyRun(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, &Result{SchemaVersion: 1, Command: "bench"}); err != nil {
		t.Fatal(err)
	}
	var doc junitDoc
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil || len(doc.Suites) != 1 || doc.Suites[0].Tests != 0 {
		t.Errorf("empty run: %v\n%s", err, buf.String())
	}
}
