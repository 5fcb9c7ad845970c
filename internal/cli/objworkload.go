package cli

import (
	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/objbench"
	"github.com/fsbench/fsbench/internal/skew"
	"github.com/fsbench/fsbench/internal/units"
)

// objWorkloadFlags are the flags of objbench's workloads (--workload).
type objWorkloadFlags struct {
	objSize, objSizeDist, rng, mix, autotermDur, distribution string
}

func addObjWorkloadFlags(cmd *cobra.Command, o *ObjbenchOptions) {
	f := cmd.Flags()
	w := &o.workload
	f.StringVar(&o.Workload, "workload", "", "run this object workload instead of the checks and JuiceFS's items: `NAME`, one of\n"+objbench.WorkloadHelp())
	f.IntVar(&o.Objects, "objects", o.Objects, "workloads: objects prepared before the timed phase (get, stat, delete, list, mixed), or put without --ops/--duration")
	f.StringVar(&w.objSize, "obj-size", "", "workloads: size of every object written (default: --small-object-size)")
	f.StringVar(&w.objSizeDist, "obj-size-dist", "", "workloads: object sizes `DIST`: log2:MIN-MAX (log2-uniform) or SIZE:WEIGHT,... (weighted buckets), e.g. 4KiB:50,1MiB:40,64MiB:10")
	f.StringVar(&w.rng, "range", "", "get and mixed: read `SIZE` bytes at a random offset (4 KiB aligned) instead of whole objects")
	f.StringVar(&w.distribution, "distribution", "uniform", "get, stat and mixed's gets and stats: `DIST` of the picks of the prepared objects: uniform, zipf:S, pareto:H, normal:SIGMA% or zoned:A/B:... "+
		"(fio's random_distribution); the result gives the share of picks to the hottest 1% and 10%")
	f.IntVar(&o.Batch, "batch", 0, "delete: delete `N` objects a request (S3's multi-object delete, as warp's --batch) instead of one DELETE each; --ops then counts requests")
	f.StringVar(&w.mix, "mix", o.Mix.String(), "mixed: weights of the operations, `OP=WEIGHT,...` of get, stat, put, delete")
	f.BoolVar(&o.AutoTerm.On, "autoterm", false, "workloads: end the timed phase before --duration once throughput is stable: the 6 intervals before the last within --autoterm-pct of it, after --autoterm-dur (warp's rule)")
	f.StringVar(&w.autotermDur, "autoterm-dur", "15s", "with --autoterm: measure at least this long")
	f.Float64Var(&o.AutoTerm.Pct, "autoterm-pct", o.AutoTerm.Pct, "with --autoterm: how close, in percent, the intervals must be")
	f.Uint64Var(&o.Seed, "seed", 0, "workloads: fix the random choices (operations, sizes, offsets); 0 draws a new seed")
}

// resolveWorkload parses the workload flags into the options.
func (o *ObjbenchOptions) resolveWorkload(cmd *cobra.Command) error {
	f, w := cmd.Flags(), &o.workload
	if o.Workload == "" {
		for _, n := range []string{"objects", "obj-size", "obj-size-dist", "range", "batch", "mix", "autoterm", "autoterm-dur", "autoterm-pct", "seed", "distribution"} {
			if f.Changed(n) {
				return Usagef("--%s goes with --workload", n)
			}
		}
		return nil
	}
	if err := o.resolveSizes(f.Changed("obj-size") && f.Changed("obj-size-dist")); err != nil {
		return err
	}
	if err := o.resolveDistribution(f.Changed("distribution")); err != nil {
		return err
	}
	if f.Changed("mix") && o.Workload != "mixed" {
		return Usagef("--mix goes with --workload mixed")
	}
	m, err := objbench.ParseMix(w.mix)
	if err != nil {
		return Usagef("--mix %q: %v", w.mix, err)
	}
	o.Mix = m
	return o.resolveAutoterm(f.Changed("autoterm-dur") || f.Changed("autoterm-pct"))
}

// resolveDistribution reads --distribution, which the workloads that pick
// prepared objects at random take.
func (o *ObjbenchOptions) resolveDistribution(given bool) error {
	if !given {
		return nil
	}
	d, err := skew.Parse(o.workload.distribution)
	if err != nil {
		return Usagef("--distribution: %v", err)
	}
	if !d.IsUniform() && o.Workload != "get" && o.Workload != "stat" && o.Workload != "mixed" {
		return Usagef("--distribution goes with --workload get, stat or mixed (their picks of the prepared objects)")
	}
	o.Distribution = d
	return nil
}

func (o *ObjbenchOptions) resolveSizes(both bool) error {
	w := &o.workload
	switch {
	case both:
		return Usagef("give --obj-size or --obj-size-dist, not both")
	case w.objSizeDist != "":
		d, err := objbench.ParseSizeDist(w.objSizeDist)
		if err != nil {
			return Usagef("--obj-size-dist %q: %v", w.objSizeDist, err)
		}
		o.Sizes = d
	case w.objSize != "":
		var n int64
		if err := parseSizes(sizeArg{"obj-size", w.objSize, &n, 0}); err != nil {
			return err
		}
		o.Sizes = objbench.FixedSize(n)
	default:
		o.Sizes = objbench.FixedSize(o.SmallObjectSize)
	}
	if w.rng != "" {
		return parseSizes(sizeArg{"range", w.rng, &o.Range, 0})
	}
	return nil
}

func (o *ObjbenchOptions) resolveAutoterm(tuned bool) error {
	switch {
	case !o.AutoTerm.On && tuned:
		return Usagef("--autoterm-dur and --autoterm-pct go with --autoterm")
	case !o.AutoTerm.On:
		return nil
	case o.Duration == 0:
		return Usagef("--autoterm needs --duration, its upper bound")
	case !(o.AutoTerm.Pct > 0 && o.AutoTerm.Pct < 100):
		return Usagef("--autoterm-pct must be more than 0 and less than 100")
	}
	d, err := units.ParseDuration(o.workload.autotermDur)
	if err != nil || d <= 0 {
		return Usagef("--autoterm-dur %q: want a positive duration such as 15s", o.workload.autotermDur)
	}
	o.AutoTerm.MinDur = d
	return nil
}
