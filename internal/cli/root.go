// Package cli is fsbench's command line: one file per command, each thin.
// A command declares its flags, fills an Options struct and calls a library
// package that knows nothing of cobra.
//
// It holds no benchmark logic of its own, and it is the only package that
// imports cobra; nothing but cmd/fsbench and docgen imports it.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/fsbench/fsbench/internal/leftover"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/signals"
)

// Version is set at build time with -ldflags "-X .../internal/cli.Version=...".
var Version = "dev"

// IO is where a command reads and writes, and what it knows about them.
// Tests give it buffers.
type IO struct {
	In     io.Reader
	Out    io.Writer
	Err    io.Writer
	OutTTY bool // stdout is a terminal
	ErrTTY bool // stderr is a terminal
	InTTY  bool // stdin is a terminal
	// Cols is the terminal's width in columns, 0 when neither stdout nor
	// stderr is a terminal (help and bars are then drawn to 80).
	Cols   int
	Getenv func(string) string
}

// Globals are the flags every command has.
type Globals struct {
	NoColor bool
	Quiet   bool
	Verbose bool
}

// App carries what the commands share.
type App struct {
	IO      IO
	Globals Globals
	// commandLine is the command as typed, secrets removed, for results.
	commandLine string
	// Left is what the running command has created and not removed yet,
	// named by a second Ctrl-C.
	Left leftover.Tracker
	// results, if set, takes the command's result instead of its being
	// written (a probe's round).
	results func(*report.Result)
	// gate is what writes progress to stderr (progressout.go).
	gate stderrGate
	// confine, on an agent, refuses a directory outside its allowed
	// roots: a file the job makes (its journal) is made in a directory it
	// accepted (sysio.CreateNew).
	confine func(dir string) error
}

// Color reports whether output to a terminal may be coloured: not with
// --no-color, not with NO_COLOR set, not with TERM=dumb.
func (a *App) Color(tty bool) bool {
	if !tty || a.Globals.NoColor {
		return false
	}
	if a.IO.Getenv("NO_COLOR") != "" || a.IO.Getenv("TERM") == "dumb" {
		return false
	}
	return true
}

// Warnf prints a warning to stderr unless -q was given.
func (a *App) Warnf(format string, args ...any) {
	if a.Globals.Quiet {
		return
	}
	a.progressWrite(fmt.Sprintf("Warning: "+format+"\n", args...))
}

// Infof prints progress information to stderr unless -q was given.
func (a *App) Infof(format string, args ...any) {
	if a.Globals.Quiet {
		return
	}
	a.progressWrite(fmt.Sprintf(format+"\n", args...))
}

// NewRoot builds the command tree.
func NewRoot(app *App) *cobra.Command {
	root := &cobra.Command{
		Use:   "fsbench",
		Short: "Benchmark and check file systems and object stores",
		Long: `fsbench measures how fast a storage system is and whether it is healthy:
mounted file systems (JuiceFS, NFS, any FUSE mount, local disks) with
"fsbench bench", object stores (S3, COS, MinIO, NFS servers, directories)
with "fsbench objbench", and what a mount is doing with "fsbench stats" and
"fsbench profile".

Exit codes:
  0    success
  1    runtime error: the storage or the run failed
  2    usage error: bad flags, arguments or input
  3    an expectation, functional check or regression check failed
  130  interrupted (Ctrl-C or SIGTERM)`,
		Version: Version,
		// The root runs only to show its help, or to refuse an unknown
		// command (see typeArgErrors).
		RunE:          func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		SilenceUsage:  true,
		SilenceErrors: true,
		CompletionOptions: cobra.CompletionOptions{
			HiddenDefaultCmd: false,
		},
	}
	root.SuggestionsMinimumDistance = 2
	root.SetVersionTemplate("fsbench {{.Version}}\n")
	root.SetIn(app.IO.In)
	root.SetOut(app.IO.Out)
	root.SetErr(app.IO.Err)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &UsageError{Err: peerFlagHint(c, err)}
	})
	pf := root.PersistentFlags()
	pf.BoolVar(&app.Globals.NoColor, "no-color", false, "never colour the output (also: NO_COLOR=1)")
	pf.BoolVarP(&app.Globals.Quiet, "quiet", "q", false, "print only results and errors: no progress, no warnings")
	pf.BoolVarP(&app.Globals.Verbose, "verbose", "v", false, "more detail: all latency percentiles, op and error counts")

	for _, newCmd := range commands {
		root.AddCommand(newCmd(app))
	}
	styleCommands(app, root)
	return root
}

// commands lists every subcommand's constructor, in help order.
var commands = []func(*App) *cobra.Command{
	newBenchCmd,
	newFioCmd,
	newObjbenchCmd,
	newTrainCmd,
	newCheckpointCmd,
	newStatsCmd,
	newProfileCmd,
	newReplayCmd,
	newProbeCmd,
	newIO500Cmd,
	newVdbenchCmd,
	newCompareCmd,
	newHistoryCmd,
	newVerifyCmd,
	newReportCmd,
	newAgentCmd,
}

// Main runs fsbench with the process's arguments and streams and returns
// the exit code.
func Main() int {
	app := &App{IO: IO{
		In:     os.Stdin,
		Out:    os.Stdout,
		Err:    os.Stderr,
		OutTTY: term.IsTerminal(int(os.Stdout.Fd())),
		ErrTTY: term.IsTerminal(int(os.Stderr.Fd())),
		InTTY:  term.IsTerminal(int(os.Stdin.Fd())),
		Getenv: os.Getenv,
	}}
	app.IO.Cols = termCols(os.Stdout, os.Stderr)
	if stop := startProfile(os.Getenv("FSBENCH_CPUPROFILE"), app.IO.Err); stop != nil {
		defer stop()
	}
	defer signal.Stop(signals.C)
	return RunInterruptible(app, os.Args[1:], signals.C)
}

// startProfile writes a CPU profile of the whole run to file, for looking
// at fsbench's own cost (go tool pprof); "" profiles nothing. It returns
// the function that ends the profile, or nil.
func startProfile(file string, errw io.Writer) func() {
	if file == "" {
		return nil
	}
	f, err := os.Create(file)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(errw, "fsbench: FSBENCH_CPUPROFILE: %v\n", err)
		return nil
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// Run executes one command line and returns its exit code, printing the
// error (one line) to app's stderr.
func Run(ctx context.Context, app *App, args []string) int {
	app.commandLine = CommandLine(args)
	cmd, err := execute(ctx, NewRoot(app), args)
	if err != nil {
		code := ExitCode(err)
		if code != ExitInterrupted || !errors.Is(err, ErrInterrupted) {
			msg := strings.TrimSpace(err.Error())
			if code == ExitUsage && cmd != nil {
				msg += fmt.Sprintf(" (see '%s --help')", cmd.CommandPath())
			}
			app.progressWrite(fmt.Sprintf("fsbench: %s\n", msg))
		}
		return code
	}
	return ExitOK
}

// execute runs root on args, with every mistake cobra finds in the
// arguments typed as a UsageError where it is found.
func execute(ctx context.Context, root *cobra.Command, args []string) (*cobra.Command, error) {
	root.SetArgs(args)
	// The commands cobra adds itself, added now so that their arguments
	// are checked the same way.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd(args...)
	if len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd) {
		registerCompletions(root)
	}
	typeArgErrors(root)
	return root.ExecuteContextC(ctx)
}

// typeArgErrors makes the argument checks of c and its subcommands return
// UsageErrors. A command without a check takes any arguments, as cobra
// lets subcommands do; the root takes none but a command name.
func typeArgErrors(c *cobra.Command) {
	check := c.Args
	switch {
	case !c.HasParent():
		check = unknownCommand
	case check == nil:
		check = cobra.ArbitraryArgs
	}
	c.Args = func(cmd *cobra.Command, args []string) error {
		if cmd.HasParent() {
			if err := peerOperandHint(cmd, args); err != nil {
				return err
			}
		}
		err := check(cmd, args)
		var ue *UsageError
		if err != nil && !errors.As(err, &ue) {
			err = &UsageError{Err: err}
		}
		return err
	}
	for _, sub := range c.Commands() {
		typeArgErrors(sub)
	}
}

// unknownCommand is the root's argument check: an argument that is not a
// command's name is a usage error, with the names it may be a typo of.
func unknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += " (did you mean " + strings.Join(s, " or ") + "?)"
	}
	return &UsageError{Err: errors.New(msg)}
}

// exactArgs is cobra.ExactArgs with a usage error and a message naming what
// is expected.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return Usagef("%s expects %s (got %d arguments)", cmd.CommandPath(), what, len(args))
		}
		return nil
	}
}

// minArgs is cobra.MinimumNArgs with a usage error naming what is
// expected.
func minArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return Usagef("%s expects %s (got %d arguments)", cmd.CommandPath(), what, len(args))
		}
		return nil
	}
}
