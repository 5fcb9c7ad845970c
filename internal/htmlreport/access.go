package htmlreport

import "fmt"

// accessBlock is the skewed access of every phase that drew its files,
// blocks or objects from a distribution (--distribution): the share of
// the picks that went to the hottest 1% and 10% of the items, measured
// and as the distribution has it, as the run's table says under it. It
// has no table when no phase was skewed.
func (in *input) accessBlock() block {
	b := block{Title: "Skewed access"}
	t := table{Head: []string{"Result", "Phase", "Distribution", "Items", "Picks", "Hottest 1%", "Hottest 10%"}}
	for j, r := range in.results {
		for _, p := range r.Phases {
			for _, a := range p.Access {
				t.Rows = append(t.Rows, []cell{
					{Text: in.names[j]},
					{Text: p.Title},
					{Text: a.Distribution},
					{Text: fmt.Sprintf("%d %s", a.Items, a.Of), Num: true},
					{Text: fmt.Sprint(a.Picks), Num: true},
					hotShare(a.Top1Pct, a.Want1Pct),
					hotShare(a.Top10Pct, a.Want10Pct),
				})
			}
		}
	}
	if len(t.Rows) == 0 {
		return b
	}
	b.Notes = []string{"How each skewed phase's random picks fell on its items: the share of the picks that went to the hottest 1% and 10% of them, measured, with the share the distribution gives beneath."}
	b.Tables = []table{t}
	return b
}

// hotShare is a measured share of the picks, the expected one beneath.
func hotShare(got, want float64) cell {
	return cell{Text: fmt.Sprintf("%.1f%%", got), Sub: fmt.Sprintf("expected %.1f%%", want), Num: true}
}
