package journal

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Line is the one-line verdict of a verification.
func (s *Summary) Line() string {
	verdict := "all held"
	switch {
	case s.Failed() > 0:
		verdict = "LOST WRITES"
	case s.durable() == 0 && s.objects:
		verdict = "nothing to check (the journal records no put that still stands)"
	case s.durable() == 0:
		verdict = "nothing durable to check (no fsync covered a write: run bench with --fsync)"
	}
	return fmt.Sprintf("verify: %s: %d of %d durable writes held (%d lost, %d stale, %d torn, %d unexpected) in %d %ss; %s",
		verdict, s.durable()-(s.Failed()-s.back), s.durable(), s.Lost, s.Stale, s.Torn, s.Unexpected, s.Files, s.noun(), s.tail())
}

// noun is what the journal's paths name: file or object.
func (s *Summary) noun() string {
	if s.objects {
		return "object"
	}
	return "file"
}

// durable is how many of the writes checked an fsync covered.
func (s *Summary) durable() int { return s.Writes - s.Unsynced }

func (s *Summary) tail() string {
	switch {
	case s.Unsynced == 0:
		return "no unsynced tail"
	case s.UnsyncedFailed == 0:
		return fmt.Sprintf("unsynced tail: %d writes, all held", s.Unsynced)
	}
	return fmt.Sprintf("unsynced tail: %d writes, %d of them not held (not counted: nothing made them durable)", s.Unsynced, s.UnsyncedFailed)
}

// group is consecutive findings of one kind in one file, shown as a row.
type group struct {
	Finding
	writes int
}

func groups(fs []Finding) []group {
	var gs []group
	for _, f := range fs {
		if n := len(gs); n > 0 {
			g := &gs[n-1]
			if g.Kind == f.Kind && g.Path == f.Path && g.Durable == f.Durable && g.Detail == f.Detail && g.Offset+g.Length == f.Offset {
				g.Length += f.Length
				g.BadBytes += f.BadBytes
				g.writes++
				continue
			}
		}
		gs = append(gs, group{f, 1})
	}
	return gs
}

// detail is the row's detail, with the bytes that did not hold when they
// are not all of it.
func (g *group) detail() string {
	if g.BadBytes == g.Length {
		return g.Detail
	}
	return fmt.Sprintf("%s: %d bytes from offset %d", g.Detail, g.BadBytes, g.BadOffset)
}

// tornTail says that a journal's last n bytes were left out.
func tornTail(n int64) string {
	return fmt.Sprintf("its last %d bytes were not whole records (torn when its writer stopped) and were left out", n)
}

// MaxRows bounds the rows of WriteTable; the JSON has every finding.
const MaxRows = 50

// WriteTable writes the verdict line, a note on a torn journal tail, and
// a table of what did not hold (consecutive writes of a kind in a file
// make one row).
func WriteTable(w io.Writer, s *Summary) error {
	var b strings.Builder
	fmt.Fprintln(&b, s.Line())
	for _, p := range s.Journals {
		fmt.Fprintf(&b, "  %s (host %s): %s\n", p.Journal, p.Host, strings.TrimPrefix(p.Verdict, "verify: "))
		if p.IgnoredBytes > 0 {
			fmt.Fprintf(&b, "  %s: %s\n", p.Journal, tornTail(p.IgnoredBytes))
		}
	}
	if s.IgnoredBytes > 0 && len(s.Journals) == 0 {
		fmt.Fprintf(&b, "journal: %s\n", tornTail(s.IgnoredBytes))
	}
	gs := groups(s.Findings)
	if len(gs) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "KIND\tPATH\tOFFSET\tLENGTH\tWRITES\tSYNCED\tDETAIL")
		for i, g := range gs {
			if i == MaxRows {
				fmt.Fprintf(tw, "...\t%d more rows (-o json lists every write)\t\t\t\t\t\n", len(gs)-MaxRows)
				break
			}
			synced := "yes"
			if !g.Durable {
				synced = "no"
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\n", g.Kind, g.Path, g.Offset, g.Length, g.writes, synced, g.detail())
		}
		tw.Flush()
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes s as JSON.
func WriteJSON(w io.Writer, s *Summary) error {
	if s.Findings == nil {
		s.Findings = []Finding{}
	}
	s.Verdict = s.Line()
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(s)
}
