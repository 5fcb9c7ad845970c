package history

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/fsbench/fsbench/internal/report"
)

// Defaults of a check and of the change-point search.
const (
	// FalseAlarm is the default chance that a check of a run like those
	// of the latest segment calls it outside, over all figures judged.
	FalseAlarm = 0.01
	// MinRuns is the fewest runs of the latest segment a figure is
	// judged against.
	MinRuns = 5
)

// Options tune the judgements of a history.
type Options struct {
	// FalseAlarm is the chance, over all the figures a check judges, of
	// calling a run outside that is like the latest segment's runs; 0
	// means FalseAlarm.
	FalseAlarm float64
	// All judges every figure; otherwise only throughputs, which do not
	// hang on a few slow operations as a percentile does.
	All bool
	// MinChange (a fraction; 0: none) is the smallest change that counts:
	// a figure beyond its bound is outside only when it is also worse
	// than its segment's median by more than this. A paced series (a
	// run at --rate) swings by a tenth of a percent, so its bound is
	// that close to its median.
	MinChange float64
	// Change points: see ChangeOptions.
	Change ChangeOptions
}

func (o Options) falseAlarm() float64 {
	if o.FalseAlarm > 0 {
		return o.FalseAlarm
	}
	return FalseAlarm
}

func (o Options) judged(figure string) bool { return o.All || Higher(figure) }

// Judgement is one figure of a new run against its series.
type Judgement struct {
	Figure string  `json:"figure"`
	Unit   string  `json:"unit"`
	Higher bool    `json:"higher_is_better"`
	New    float64 `json:"new"`
	// Runs are the runs of the latest segment: those since the figure's
	// last change point.
	Runs   int     `json:"runs"`
	Median float64 `json:"median"`
	// Bound is the worst value a run like the segment's takes with
	// probability 1 - the figure's share of the false-alarm rate (a
	// one-sided prediction bound of the segment's mean and spread); 0
	// without runs enough.
	Bound float64 `json:"bound,omitempty"`
	// Outside is set when New is beyond Bound, on the worse side (and
	// worse than Median by more than the check's threshold).
	Outside bool `json:"outside"`
	// Small is set when New is beyond Bound but worse than Median by no
	// more than the check's threshold: not outside.
	Small bool `json:"within_threshold,omitempty"`
	// Needs is how many more runs the segment needs before the figure can
	// be judged (0: judged).
	Needs int `json:"needs,omitempty"`
}

// Check is a new run judged against its series.
type Check struct {
	Series string `json:"series"`
	Key    Key    `json:"key"`
	// New is set when the run starts a series of its own; Differs then
	// names the series of the same command and target whose parameters
	// differ, with how.
	New     bool                `json:"new_series"`
	Differs map[string][]string `json:"differs,omitempty"`
	// FalseAlarm is the chance, over the figures judged, of calling a run
	// outside that is like the segments' runs; each figure is judged at
	// its share.
	FalseAlarm float64 `json:"false_alarm"`
	// Threshold is the smallest change that counts (Options.MinChange).
	Threshold float64     `json:"threshold,omitempty"`
	Figures   []Judgement `json:"figures"`
	Outside   int         `json:"outside"`
	// Needs is the most runs any judged figure's segment still needs.
	Needs int `json:"needs,omitempty"`
}

// CheckResult judges res against the series of its key in all.
func CheckResult(all []*Series, res *report.Result, o Options) Check {
	e := EntryOf(res, "")
	c := Check{Series: e.Series, Key: e.Key, FalseAlarm: o.falseAlarm(), Threshold: o.MinChange}
	s := Find(all, e.Series)
	if s == nil {
		c.New = true
		for _, x := range all {
			if x.Key.sameKind(e.Key) {
				if c.Differs == nil {
					c.Differs = map[string][]string{}
				}
				c.Differs[x.ID] = x.Key.Diff(e.Key)
			}
		}
		s = &Series{ID: e.Series, Key: e.Key}
	}
	s = s.without(e)
	var judged []Figure
	for _, f := range e.Figures {
		if o.judged(f.Name) {
			judged = append(judged, f)
		}
	}
	share := c.FalseAlarm / float64(max(len(judged), 1))
	for _, f := range judged {
		j := judge(s, f, share, o)
		if j.Outside {
			c.Outside++
		}
		c.Needs = max(c.Needs, j.Needs)
		c.Figures = append(c.Figures, j)
	}
	return c
}

// judge is figure f of a new run against the latest segment of its
// series, at false-alarm rate alpha.
func judge(s *Series, f Figure, alpha float64, o Options) Judgement {
	j := Judgement{Figure: f.Name, Unit: f.Unit, Higher: Higher(f.Name), New: f.Value}
	values, _ := s.Values(f.Name)
	seg := values[latestStart(values, o.Change):]
	j.Runs = len(seg)
	if len(seg) > 0 {
		j.Median = median(seg)
	}
	if len(seg) < MinRuns {
		j.Needs = MinRuns - len(seg)
		return j
	}
	m, sd := meanSD(seg)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(seg) - 1)}.Quantile(1 - alpha)
	w := t * sd * math.Sqrt(1+1/float64(len(seg)))
	worse := math.Inf(1) // a change from a median of 0 counts whatever the threshold
	if j.Median != 0 {
		worse = (j.Median - f.Value) / j.Median
	}
	if j.Higher {
		j.Bound = m - w
		j.Outside = f.Value < j.Bound
	} else {
		j.Bound = m + w
		j.Outside = f.Value > j.Bound
		worse = -worse
	}
	if j.Outside && o.MinChange > 0 && !(worse > o.MinChange) {
		j.Outside, j.Small = false, true
	}
	return j
}

func meanSD(v []float64) (mean, sd float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(v)-1))
}

// without is s without the run of e, when the history holds it already:
// a run is not judged against itself.
func (s *Series) without(e Entry) *Series {
	out := &Series{ID: s.ID, Key: s.Key}
	for _, x := range s.Entries {
		if x.name() != e.name() {
			out.Entries = append(out.Entries, x)
		}
	}
	return out
}

// JudgeFigure judges one figure of res against its series at the whole
// false-alarm rate of o: what --expect NAME.vs_history asks. ok is false
// when res has no such figure.
func JudgeFigure(all []*Series, res *report.Result, figure string, o Options) (j Judgement, ok bool) {
	e := EntryOf(res, "")
	v, ok := e.Value(figure)
	if !ok {
		return Judgement{}, false
	}
	s := Find(all, e.Series)
	if s == nil {
		s = &Series{ID: e.Series, Key: e.Key}
	}
	f := Figure{Name: figure, Value: v}
	for _, x := range e.Figures {
		if x.Name == figure {
			f = x
		}
	}
	return judge(s.without(e), f, o.falseAlarm(), o), true
}
