package engine

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Operations recorded in classes add up, per class, to the phase's total;
// a class's time to first byte is recorded only where FirstByte was.
func TestClasses(t *testing.T) {
	e := New(3)
	p := Phase{Name: "mix", Tasks: 90, Shared: true, Classes: 3, KeepGoing: true,
		Do: func(w *Worker, task, _ int) error {
			s, ok := w.Begin()
			if !ok {
				return nil
			}
			class := task % 3
			if class == 2 {
				w.FailAs(errors.New("no"), class)
				return nil
			}
			if class == 0 {
				w.FirstByte(s)
			}
			w.EndAs(s, int64(class+1), class)
			return nil
		}}
	res, err := e.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Classes) != 3 {
		t.Fatalf("%d classes", len(res.Classes))
	}
	c := res.Classes
	if c[0].Ops != 30 || c[1].Ops != 30 || c[2].Ops != 0 || c[2].Errors != 30 || res.Errors != 30 {
		t.Errorf("class ops %d %d %d, errors %d (phase %d)", c[0].Ops, c[1].Ops, c[2].Ops, c[2].Errors, res.Errors)
	}
	if c[0].Bytes != 30 || c[1].Bytes != 60 || res.Bytes != 90 {
		t.Errorf("class bytes %d %d, phase %d", c[0].Bytes, c[1].Bytes, res.Bytes)
	}
	if c[0].TTFB == nil || c[0].TTFB.Count() != 30 || c[1].TTFB != nil {
		t.Errorf("time to first byte recorded in the wrong classes")
	}
	if c[0].Hist.Count()+c[1].Hist.Count() != res.Hist.Count() {
		t.Errorf("class histograms hold %d+%d samples, the phase's %d", c[0].Hist.Count(), c[1].Hist.Count(), res.Hist.Count())
	}
}

// EndEarly ends a phase before its duration, and the result says so; a
// phase it never ends lasts its duration.
func TestEndEarly(t *testing.T) {
	for _, end := range []bool{true, false} {
		e := New(2)
		calls := 0
		p := Phase{Name: "x", Tasks: 10, Duration: 2 * time.Second, Interval: 50 * time.Millisecond,
			EndEarly: func(series []Sample) bool { calls++; return end && len(series) >= 3 },
			Do: func(w *Worker, _, _ int) error {
				s, ok := w.Begin()
				if ok {
					time.Sleep(time.Millisecond)
					w.End(s, 0)
				}
				return nil
			}}
		res, err := e.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if res.EndedEarly != end || res.Incomplete {
			t.Errorf("end=%v: EndedEarly %v, Incomplete %v", end, res.EndedEarly, res.Incomplete)
		}
		if end && (res.Elapsed >= time.Second || calls != 3) {
			t.Errorf("ended early after %s and %d calls", res.Elapsed, calls)
		}
		// The operations finished after the decision are in its interval,
		// not in a sliver of their own.
		var ops int64
		for _, smp := range res.Series {
			ops += smp.Ops
		}
		if end && (len(res.Series) != 3 || ops != res.Ops) {
			t.Errorf("ended early: %d intervals with %d operations, want 3 with %d", len(res.Series), ops, res.Ops)
		}
		if !end && res.Elapsed < 2*time.Second {
			t.Errorf("a phase not ended early lasted %s", res.Elapsed)
		}
	}
}
