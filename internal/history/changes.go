package history

// ChangeOptions tune the change-point search.
type ChangeOptions struct{}

// latestStart is the index of the first value of the latest segment of
// values: after its last change point.
func latestStart(values []float64, o ChangeOptions) int { return 0 }

// Change is a point where a figure's series changed.
type Change struct {
	Index int // the first run of the new segment, 0-based over the figure's values
}

func (c Change) describe(figure, unit string) string { return "" }

// Analysis is one figure of a series: its values and change points.
type Analysis struct {
	Figure  string
	Unit    string
	Values  []float64
	Entries []int // the series' entry of each value
	Changes []Change
}

// Analyse finds the change points of one figure of s.
func Analyse(s *Series, figure string, o ChangeOptions) Analysis {
	a := Analysis{Figure: figure}
	a.Values, a.Entries = s.Values(figure)
	for _, f := range s.Entries[a.Entries[len(a.Entries)-1]].Figures {
		if f.Name == figure {
			a.Unit = f.Unit
		}
	}
	return a
}

// SeriesAnalysis is a series with each figure analysed, as history show
// -o json writes it.
type SeriesAnalysis struct {
	ID      string     `json:"series"`
	Key     Key        `json:"key"`
	Runs    int        `json:"runs"`
	Figures []Analysis `json:"figures"`
}

// Analyses analyses every figure of every series; last keeps each
// figure's latest values only (0: all), after the change points are found
// over all of them.
func Analyses(all []*Series, last int, o ChangeOptions) []SeriesAnalysis {
	var out []SeriesAnalysis
	for _, s := range all {
		sa := SeriesAnalysis{ID: s.ID, Key: s.Key, Runs: len(s.Entries)}
		for _, name := range s.FigureNames() {
			sa.Figures = append(sa.Figures, Analyse(s, name, o))
		}
		out = append(out, sa)
	}
	return out
}
