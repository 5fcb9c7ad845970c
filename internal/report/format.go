package report

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Format is an output format of results.
type Format string

// The output formats every benchmark command offers.
const (
	FormatTable Format = "table"
	FormatJSON  Format = "json"
	FormatCSV   Format = "csv"
)

// Formats lists the formats ParseFormat accepts; commands may add their own
// (see RegisterFormat).
func Formats() []string {
	out := []string{string(FormatTable), string(FormatJSON), string(FormatCSV)}
	for _, f := range extraFormats {
		out = append(out, string(f.name))
	}
	return out
}

type extraFormat struct {
	name   Format
	render func(io.Writer, *Result, Options) error
}

var extraFormats []extraFormat

// RegisterFormat adds an output format (for example JUnit XML). It is meant
// to be called from package initialisation; a duplicate name panics, since
// it is a programming error.
func RegisterFormat(name Format, render func(io.Writer, *Result, Options) error) {
	for _, n := range Formats() {
		if n == string(name) {
			panic("report: duplicate format " + string(name))
		}
	}
	extraFormats = append(extraFormats, extraFormat{name, render})
}

// ParseFormat checks an -o/--output value.
func ParseFormat(s string) (Format, error) {
	for _, n := range Formats() {
		if s == n {
			return Format(s), nil
		}
	}
	return "", fmt.Errorf("unknown output format %q (want one of %s)", s, strings.Join(Formats(), ", "))
}

// Options tune the human-readable renderers.
type Options struct {
	Color   bool // ANSI colours (only on a terminal, never with --no-color)
	Verbose bool // more columns and details
}

// Write renders r in format f.
func Write(w io.Writer, r *Result, f Format, o Options) error {
	switch f {
	case FormatJSON:
		return WriteJSON(w, r)
	case FormatCSV:
		return WriteCSV(w, r)
	case FormatTable, "":
		return WriteTable(w, r, o)
	}
	for _, x := range extraFormats {
		if x.name == f {
			return x.render(w, r, o)
		}
	}
	return fmt.Errorf("unknown output format %q", f)
}

// WriteJSON writes the whole result as indented JSON.
func WriteJSON(w io.Writer, r *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ReadJSON reads a result written by WriteJSON.
func ReadJSON(rd io.Reader) (*Result, error) {
	var r Result
	dec := json.NewDecoder(rd)
	if err := dec.Decode(&r); err != nil {
		return nil, decodeError(err)
	}
	if r.SchemaVersion == 0 {
		return nil, fmt.Errorf("not an fsbench result (no schema_version)")
	}
	if r.SchemaVersion < 0 {
		return nil, fmt.Errorf("schema_version %d is not a version (1 to %d)", r.SchemaVersion, SchemaVersion)
	}
	if r.SchemaVersion > SchemaVersion {
		return nil, fmt.Errorf("result schema version %d is newer than this fsbench understands (%d)", r.SchemaVersion, SchemaVersion)
	}
	if err := r.checkFigures(); err != nil {
		return nil, err
	}
	return &r, nil
}

// decodeError says what is wrong with a file that does not decode as a
// result, in words rather than the decoder's (EOF, Go types).
func decodeError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return errors.New("empty: not an fsbench result")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("the JSON ends too early (a truncated file?)")
	case errors.As(err, &syn):
		return fmt.Errorf("not JSON: %v (at byte %d)", syn, syn.Offset)
	case errors.As(err, &typ) && typ.Field == "":
		return fmt.Errorf("not an fsbench result (a JSON %s, not an object)", typ.Value)
	case errors.As(err, &typ):
		return fmt.Errorf("field %s: a JSON %s is not what a result holds there", typ.Field, typ.Value)
	}
	return err
}

// CSVHeader is the header row of WriteCSV.
var CSVHeader = []string{
	"name", "title", "ops", "items", "bytes", "errors", "throttled", "seconds",
	"bytes_per_sec", "ops_per_sec", "items_per_sec", "value", "value_unit", "cost", "cost_unit",
	"latency_of", "mean_us", "p50_us", "p90_us", "p99_us", "p999_us", "max_us", "incomplete",
}

// WriteCSV writes one row per phase under CSVHeader.
func WriteCSV(w io.Writer, r *Result) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(CSVHeader)
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	d := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, p := range r.Phases {
		l := p.Latency
		_ = cw.Write([]string{
			p.Name, p.Title, d(p.Ops), d(p.Items), d(p.Bytes), d(p.Errors), d(p.Throttled), f(round(p.Seconds, 6)),
			f(round(p.BytesPerSec, 3)), f(round(p.OpsPerSec, 3)), f(round(p.ItemsPerSec, 3)),
			f(round(p.Value.Value, 3)), string(p.Value.Unit), f(round(p.Cost.Value, 3)), string(p.Cost.Unit),
			p.LatencyOf, f(round(l.Mean, 3)), f(l.P50), f(l.P90), f(l.P99), f(l.P999), f(l.Max),
			strconv.FormatBool(p.Incomplete),
		})
	}
	cw.Flush()
	return cw.Error()
}

func round(v float64, digits int) float64 {
	s := strconv.FormatFloat(v, 'f', digits, 64)
	out, _ := strconv.ParseFloat(s, 64)
	return out
}
