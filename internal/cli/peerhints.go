package cli

import (
	"errors"
	"os"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/fiojob"
)

// A flag another tool spells that fsbench does not know is refused with
// the tool's name and fsbench's way to say it, in one line: someone typing
// fio's --bs learns --xfer-size, not only that --bs is unknown.

// peerMeaning is what one tool means by a spelling, and how it is said
// here: here[command], else here[""]; none means fsbench has no flag for it.
type peerMeaning struct {
	peer, what string
	here       map[string]string
}

// peerTail is how a peer's whole command line or file runs here, said
// after its hint in command.
func peerTail(peer, command string) string {
	switch {
	case peer == "fio":
		return ", or run fio's line with `fsbench fio`"
	case peer == "vdbench":
		return "; run the parameter file with `fsbench vdbench FILE`"
	case peer == "warp" && command != "objbench":
		return "; object stores are measured with `fsbench objbench`"
	case (peer == "mdtest" || peer == "IOR") && command != "io500":
		return "; IOR's and mdtest's phases are in `fsbench io500`"
	}
	return ""
}

// here builds a peerMeaning's map: bench's and objbench's spellings, and
// the one for the other commands.
func here(bench, objbench, other string) map[string]string {
	return map[string]string{"bench": bench, "objbench": objbench, "": other}
}

// everywhere is a peerMeaning's map with one spelling for every command.
func everywhere(s string) map[string]string { return map[string]string{"": s} }

// peerFlags are the peers' spellings, as typed (--long, -s): fio, warp,
// mdtest, IOR, elbencho, vdbench and juicefs's sync.
var peerFlags = map[string][]peerMeaning{
	// fio.
	"--bs":              {{"fio", "", here("`--xfer-size`", "`--obj-size`", "")}},
	"--numjobs":         {{"fio", "", map[string]string{"bench": "`-p`", "objbench": "`-p`", "io500": "`-p`", "checkpoint": "`-p`", "train": "`-p`"}}},
	"--size":            {{"fio", "", here("`--file-size`", "`--obj-size`", "")}, {"elbencho", "", nil}},
	"--runtime":         {{"fio", "", here("`--duration`", "`--duration`", "")}},
	"--ramp_time":       {{"fio", "", here("`--warmup`", "`--warmup`", "")}},
	"--rwmixread":       {{"fio", "", here("`--read-pct`", "", "")}},
	"--nrfiles":         {{"fio", "", here("`--files`", "", "")}},
	"--rate_iops":       {{"fio", "", here("`--rate`", "`--rate`", "")}},
	"--iodepth":         {{"fio", "", here("bench's `--iodepth` with `--ioengine io_uring`", "", "")}},
	"--ioengine":        {{"fio", "", here("bench's `--ioengine` (sync or io_uring)", "", "")}},
	"--direct":          {{"fio", "", here("`--direct`", "", "")}},
	"--time_based":      {{"fio", "", here("`--duration` alone", "`--duration` alone", "")}},
	"--filename":        {{"fio", "", here("the directory given as PATH, in which bench makes its files", "", "")}},
	"--directory":       {{"fio", "", here("PATH, the argument", "", "")}},
	"--name":            {{"fio", "", here("a phase's name in a job file (-f FILE)", "", "")}},
	"--group_reporting": {{"fio", "", everywhere("the default: a phase's threads are reported together")}},
	"--rw":              {{"fio", "", here("", "`--workload`", "")}},
	// warp.
	"--concurrent":   {{"warp", "", here("`-p`", "`-p`", "")}},
	"--obj.size":     {{"warp", "", here("", "`--obj-size`", "")}},
	"--obj.randsize": {{"warp", "", here("", "`--obj-size-dist log2:MIN-MAX`", "")}},
	"--noclear":      {{"warp", "", here("`--keep`", "`--keep`", "")}},
	"--host":         {{"warp", "", here("", "the store's URL, the argument (`--endpoints` for several)", "")}},
	"--access-key":   {{"warp", "", here("", "`--access-key`", "")}},
	"--secret-key":   {{"warp", "", here("", "`--secret-key`", "")}},
	"--duration":     {{"warp", "", here("`--duration`", "`--duration`", "")}},
	// elbencho.
	"-N": {{"elbencho", "files per directory", here("`--files`", "", "")}},
	// mdtest, IOR, elbencho: their short flags.
	"-n": {{"mdtest", "items per process", map[string]string{"bench": "`--files`", "objbench": "`--small-objects`", "io500": "`--mdtest-easy-files`"}},
		{"elbencho", "directories per thread", here("`--width`", "", "")}},
	"-z": {{"mdtest", "tree depth", here("`--depth`", "", "")}},
	"-I": {{"mdtest", "items per directory", here("`--files`", "", "")}},
	"-b": {{"mdtest", "branching factor", here("`--width`", "", "")},
		{"IOR", "block size per task", here("`--file-size`", "", "")}},
	"-F": {{"mdtest", "files only", here("bench's file phases (--rw create, stat, ...)", "", "")},
		{"IOR", "file per process", here("what bench does: each thread has its own files", "", "")}},
	"-t": {{"IOR", "transfer size", map[string]string{"bench": "`--xfer-size`", "objbench": "`--block-size`", "io500": "`--ior-easy-xfer`"}},
		{"elbencho", "thread count", map[string]string{"bench": "`-p`", "objbench": "`-p`", "io500": "`-p`"}}},
	"-s": {{"IOR", "segment count", map[string]string{"bench": "`--file-size` (the whole file: IOR's -b times -s)", "io500": "`--ior-hard-segments`"}}},
	// vdbench.
	"-f": {{"vdbench", "parameter file", everywhere("")}},
}

// peerOperands are dd's operands, which reach a command as arguments.
var peerOperands = map[string]peerMeaning{
	"bs":    {"dd", "", here("`--xfer-size`", "`--block-size`", "")},
	"count": {"dd", "", here("`--ops` (or --file-size, the whole file)", "`--ops`", "")},
	"if":    {"dd", "", here("PATH, the argument (bench reads its own files, or --read-existing)", "", "")},
	"of":    {"dd", "", here("PATH, the argument", "", "")},
}

var unknownFlagRE = regexp.MustCompile(`^unknown (?:shorthand )?flag: (?:'(.)' in -\S*|(--\S+))`)

// peerFlagHint turns pflag's unknown-flag error into the peer's hint, if
// the flag is a peer's; else it returns err as it is.
func peerFlagHint(cmd *cobra.Command, err error) error {
	m := unknownFlagRE.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	name := m[2]
	if m[1] != "" {
		name = "-" + m[1]
	}
	if i := strings.IndexByte(name, '='); i > 0 {
		name = name[:i]
	}
	means, ok := peerFlags[name]
	if !ok {
		return err
	}
	return errors.New(peerHint(cmd.Name(), name, means))
}

// peerHint is the one line that names what spelling means to each peer
// and how command says it.
func peerHint(command, spelling string, means []peerMeaning) string {
	var parts []string
	tail, equivalent := "", false
	for _, m := range means {
		what := m.what
		if what == "" {
			what = "name"
		}
		part := m.peer + "'s " + what
		s, ok := m.here[command]
		if !ok {
			s = m.here[""]
		}
		switch {
		case s != "" && len(means) > 1:
			part += " (here " + s + ")"
		case s != "":
			part += "; here it is " + s
		}
		equivalent = equivalent || s != ""
		parts = append(parts, part)
		if tail == "" {
			tail = peerTail(m.peer, command)
		}
	}
	line := "`" + spelling + "` is " + strings.Join(parts, " and ")
	if !equivalent {
		line += "; fsbench " + command + " has no such flag"
	}
	return line + tail
}

// peerOperandHint refuses a dd operand (bs=1M) given as an argument.
func peerOperandHint(cmd *cobra.Command, args []string) error {
	for _, a := range args {
		k, _, ok := strings.Cut(a, "=")
		m, known := peerOperands[k]
		if !ok || !known {
			continue
		}
		if _, err := os.Stat(a); err == nil {
			continue // a file of that name
		}
		return Usagef("%s", peerHint(cmd.Name(), k+"=", []peerMeaning{m}))
	}
	return nil
}

// ioengineHint is the hint for fio's engines on --ioengine.
func ioengineHint(v string) error {
	switch v {
	case "libaio", "posixaio", "psync", "pvsync", "pvsync2", "mmap", "splice", "windowsaio", "solarisaio", "net":
		return Usagef("--ioengine %s is fio's engine; here --ioengine is sync (one call at a time, as fio's psync) or io_uring (with --iodepth N, in place of libaio), or run fio's line with `fsbench fio`", v)
	}
	return nil
}

// vdbenchLine is the first line of a vdbench parameter file: a definition
// (sd=, fsd=, wd=, fwd=, rd=, hd=, ...) or a general parameter.
var vdbenchLine = regexp.MustCompile(`^(?:sd|fsd|wd|fwd|rd|hd|data_errors|compratio|dedupratio|messagescan|validate|journal)=`)

// peerFileHint refuses, by name, a peer's file given as a workload file
// (-f FILE): vdbench's parameter file or fio's job file.
func peerFileHint(name string, data []byte) error {
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || line[0] == '#' || line[0] == '*' || line[0] == ';':
			continue
		case vdbenchLine.MatchString(line):
			return Usagef("-f %s is a vdbench parameter file; -f takes fsbench's workload file (YAML): run it with `fsbench vdbench %s`", name, name)
		case fiojob.IsJobFile(data):
			return Usagef("-f %s is a fio job file; -f takes fsbench's workload file (YAML): run it with `fsbench fio %s`", name, name)
		}
		return nil
	}
	return nil
}
