// Package htmlreport renders fsbench results as one self-contained HTML
// page: a header per result, throughput bars, the comparison that
// `fsbench compare` makes, latency percentile curves from the stored
// histograms, time series, per-host figures, functional checks,
// expectations, errors and warnings. Charts are inline SVG drawn with
// gonum.org/v1/plot, and every chart has its numbers in a table beneath it.
// The page loads nothing: no script, font, style sheet or image from
// anywhere, and its colours follow the reader's light or dark preference.
//
// It measures nothing and loads nothing at view time: no script, font or
// image from anywhere.
package htmlreport

import (
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/fsbench/fsbench/internal/compare"
	"github.com/fsbench/fsbench/internal/report"
)

// DefaultThreshold is the change in percent beyond which a difference
// between two results counts as more than noise.
const DefaultThreshold = 10.0

// Options tune a report.
type Options struct {
	// Threshold in percent: a throughput that drops, or a latency that
	// grows, by more than this is a regression (as compare --threshold);
	// an improvement by more is marked too.
	Threshold float64
	// Title is the page's title; empty for "fsbench report".
	Title string
	// Version is the fsbench that makes the page, named in its footer.
	Version string
	// Trend, when set, is the page's last section, "Trend": the charts of
	// the results' series in a history, as the history package draws
	// them.
	Trend template.HTML
}

// Write renders results as one HTML page with the default options. names
// label the results (file names, say); missing or empty names are made up
// from each result's command and start time.
func Write(w io.Writer, results []*report.Result, names []string) error {
	return WriteOptions(w, results, names, Options{Threshold: DefaultThreshold})
}

// WriteOptions renders results as one HTML page, tuned by o.
func WriteOptions(w io.Writer, results []*report.Result, names []string, o Options) error {
	if len(results) == 0 {
		return errors.New("html report: no results")
	}
	for i, r := range results {
		if r == nil {
			return fmt.Errorf("html report: result %d is missing", i+1)
		}
	}
	return newInput(results, names, o).write(w)
}

// write renders the page of in.
func (in *input) write(w io.Writer) error {
	pg, err := in.page()
	if err != nil {
		return err
	}
	if err := pageTemplate.Execute(w, pg); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	return nil
}

// input is what every section is built from.
type input struct {
	results []*report.Result
	names   []string
	opts    Options
	// cmps[i] compares results[0] (OLD) with results[i] (NEW), for i >= 1;
	// nil where the two cannot be compared (different commands).
	cmps []*compare.Report
	// notes are said at the top of the page.
	notes []string
}

func newInput(results []*report.Result, names []string, o Options) *input {
	in := &input{results: results, opts: o, names: runNames(results, names)}
	in.cmps = make([]*compare.Report, len(results))
	t := o.Threshold
	for i := 1; i < len(results); i++ {
		c, err := compare.Compare(results[0], results[i], in.names[0], in.names[i], compare.Options{Threshold: &t})
		if err != nil {
			in.notes = append(in.notes, fmt.Sprintf("%s (fsbench %s) and %s (fsbench %s) are results of different commands: they are shown side by side but not compared.",
				in.names[0], results[0].Command, in.names[i], results[i].Command))
			continue
		}
		in.cmps[i] = c
	}
	return in
}

// runNames fills in missing names and makes every name unique.
func runNames(results []*report.Result, names []string) []string {
	out := make([]string, len(results))
	seen := map[string]int{}
	for i, r := range results {
		n := ""
		if i < len(names) {
			n = strings.TrimSpace(names[i])
		}
		if n == "" {
			n = r.Command + " " + r.StartedAt.UTC().Format("2006-01-02 15:04")
		}
		seen[n]++
		if seen[n] > 1 {
			n = fmt.Sprintf("%s (%d)", n, seen[n])
		}
		out[i] = n
	}
	return out
}

var (
	//go:embed page.html
	pageHTML string
	//go:embed style.css
	styleCSS string

	pageTemplate = template.Must(template.New("page").Parse(pageHTML))
)

// page is what the template shows.
type page struct {
	CSS      template.CSS
	Title    string
	Version  string
	Params   string
	Notes    []string
	Verdicts []verdictView
	Runs     []runView
	Sections []section
	Trend    template.HTML
}

// section is one part of the page, listed in its table of contents.
type section struct {
	ID, Title string
	Intro     string
	Blocks    []block
}

// block is one chart (or several) with its notes and tables.
type block struct {
	Title  string
	Notes  []string
	Charts []template.HTML
	Tables []table
}

// table is a table of numbers or text.
type table struct {
	Caption string
	Head    []string
	Rows    [][]cell
	// Long tables scroll inside a box on screen; print shows them whole.
	Long bool
}

// cell is one table cell; Num aligns it right, Class colours it, Sub is
// a smaller line beneath the text.
type cell struct {
	Text  string
	Sub   string
	Class string
	Num   bool
}

func (in *input) page() (*page, error) {
	pg := &page{CSS: template.CSS(styleCSS), Title: in.opts.Title, Version: in.opts.Version, Trend: in.opts.Trend}
	if pg.Title == "" {
		pg.Title = "fsbench report"
	}
	pg.Runs = in.runs()
	pg.Params = in.sharedParams()
	for j := 1; j < len(in.results); j++ {
		if in.cmps[j] != nil {
			pg.Verdicts = append(pg.Verdicts, in.verdict(j))
		}
	}
	// The comparison comes first: it holds the verdict.
	builders := []func() (section, error){
		in.comparisonSection, in.throughputSection, in.capacitySection, in.latencySection, in.seriesSection, in.hostsSection,
		in.checksSection, in.internalSection, in.expectationsSection, in.problemsSection,
	}
	for _, b := range builders {
		s, err := b()
		if err != nil {
			return nil, err
		}
		if len(s.Blocks) > 0 {
			pg.Sections = append(pg.Sections, s)
		}
	}
	pg.Notes = in.notes
	return pg, nil
}
