package cli

import (
	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/units"
)

// The size flags that are juicefs bench's and objbench's read a bare number
// in JuiceFS's unit (juicefs 1.4, cmd/bench.go and cmd/objbench.go), so a
// juicefs command line means the same here: bench --block-size 4 is 4 MiB,
// objbench --block-size 4 is 4 KiB. fsbench's own size flags take no bare
// number (sizeArg.bare 0).
var juicefsBare = map[string]map[string]int64{
	"bench":    {"block-size": units.MiB, "big-file-size": units.MiB, "small-file-size": units.KiB},
	"objbench": {"block-size": units.KiB, "big-object-size": units.MiB, "small-object-size": units.KiB},
}

// bareUnit is the unit of a bare number on flag of command.
func bareUnit(command, flag string) int64 { return juicefsBare[command][flag] }

// juicefsOnly are juicefs's flags that fsbench takes but cannot honour:
// their use is named on stderr in one line, never ignored in silence.
// JuiceFS's global flags may stand anywhere on its command line, so a
// juicefs bench or objbench line may hold them.
var juicefsOnly = []struct {
	name, why string
	value     bool // takes a value
}{
	{"debug", "juicefs's debug logging; fsbench's -v shows more detail", false},
	{"trace", "juicefs's trace logging; fsbench has no trace log", false},
	{"log-level", "juicefs's log level; fsbench has no log levels (-q, -v)", true},
	{"log-id", "juicefs's log id; fsbench writes no log", true},
	{"no-agent", "juicefs's debug agent; fsbench starts none", false},
	{"pyroscope", "juicefs's profiling to a Pyroscope server; fsbench sends nothing", true},
}

// addJuicefsOnlyFlags adds juicefsOnly's flags to cmd, hidden: they are
// there for juicefs's command lines, not to be learnt.
func addJuicefsOnlyFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	for _, fl := range juicefsOnly {
		if fl.value {
			f.String(fl.name, "", "juicefs's: "+fl.why)
		} else {
			f.Bool(fl.name, false, "juicefs's: "+fl.why)
		}
		_ = f.MarkHidden(fl.name)
	}
}

// noteJuicefsOnly says, one line each, which of juicefsOnly's flags were
// given and that they change nothing here.
func noteJuicefsOnly(app *App, cmd *cobra.Command) {
	for _, fl := range juicefsOnly {
		if f := cmd.Flags().Lookup(fl.name); f != nil && f.Changed {
			app.Warnf("--%s is %s: ignored", fl.name, fl.why)
		}
	}
}
