package fiojob

import (
	"fmt"
	"os"
	"strings"
)

// ParseArgs reads fio's command line: job options as --key=value or
// --key value, each --name= starting a job (options before the first go
// to every job, as [global]); or job files; and fio's --output-format and
// --section. Job options and job files do not mix.
func ParseArgs(args []string, env Env, read func(string) ([]byte, error)) (*Input, error) {
	in := &Input{}
	var cmdline []Section
	var files []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "" || a == "-" || !strings.HasPrefix(a, "-") {
			files = append(files, a)
			continue
		}
		if !strings.HasPrefix(a, "--") {
			return nil, fmt.Errorf("%s: fio's short options are not supported; write options as --key=value", a)
		}
		key, val, has := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		key = strings.ToLower(key)
		if !has && i+1 < len(args) && (takesValue(key) || args[i+1] == "0" || args[i+1] == "1") {
			// --key value; a flag's value only when it is 0 or 1.
			i++
			val, has = args[i], true
		}
		if done, err := in.fioOption(key, val, has); done || err != nil {
			if err != nil {
				return nil, err
			}
			continue
		}
		o, err := parseOption(a[2:], "--"+key, env)
		if err != nil {
			return nil, err
		}
		if has {
			// --key value: the value as given, expanded.
			if o.Value, err = expand(val, env); err != nil {
				return nil, fmt.Errorf("--%s: %v", key, err)
			}
			o.HasValue = true
		}
		if key == "name" || len(cmdline) == 0 {
			name := "global"
			if key == "name" {
				name = o.Value
				if name == "" {
					return nil, fmt.Errorf("--name needs a value: --name=JOB")
				}
			}
			cmdline = append(cmdline, Section{Name: name, Where: "the command line"})
		}
		s := &cmdline[len(cmdline)-1]
		s.Options = append(s.Options, o)
	}
	switch {
	case len(cmdline) > 0 && len(files) > 0:
		return nil, fmt.Errorf("give job options on the command line (--name=JOB --rw=...) or job files (%s), not both", strings.Join(files, " "))
	case len(cmdline) > 0:
		if len(cmdline) == 1 && cmdline[0].Global() {
			return nil, fmt.Errorf("no job: start one with --name=JOB (as fio)")
		}
		in.Sections = cmdline
	}
	in.Files = files
	for _, f := range files {
		data, err := read(f)
		if err != nil {
			return nil, fmt.Errorf("job file: %w", err)
		}
		secs, err := ParseFile(data, f, env, read)
		if err != nil {
			return nil, err
		}
		in.Sections = append(in.Sections, secs...)
	}
	if len(in.Sections) == 0 {
		return nil, fmt.Errorf("no job: give fio's options (--name=JOB --rw=read ...) or a job file")
	}
	return in, nil
}

// fioOption takes fio's own options (not a job's): done reports one.
func (in *Input) fioOption(key, val string, has bool) (done bool, err error) {
	switch key {
	case "output-format":
		for _, f := range strings.Split(val, ",") {
			if f != "normal" && f != "json" {
				return true, fmt.Errorf("--output-format=%s: fsbench fio writes normal (its table) or json", val)
			}
		}
		in.OutputFormat = val
		if strings.Contains(val, "json") {
			in.OutputFormat = "json"
		}
		return true, nil
	case "section":
		if !has || val == "" {
			return true, fmt.Errorf("--section needs a section name")
		}
		in.Only = append(in.Only, val)
		return true, nil
	case "eta", "eta-newline", "eta-interval":
		return true, nil // fsbench shows its own progress
	case "output":
		return true, fmt.Errorf("--output=%s: fsbench fio writes its result to stdout; save the full result with --result-file FILE", val)
	}
	if reason, ok := refusedCommand[key]; ok {
		return true, fmt.Errorf("--%s: %s", key, reason)
	}
	return false, nil
}

// refusedCommand are fio's own command-line options fsbench fio does not
// take.
var refusedCommand = map[string]string{
	"minimal":             "fsbench fio writes its table or JSON (--output-format=json)",
	"parse-only":          "not supported; fsbench fio checks every option before it runs anything",
	"client":              "fio's client/server mode is not supported; see fsbench's --hosts (docs/many-hosts.md)",
	"server":              "fio's client/server mode is not supported",
	"readonly":            "not supported",
	"bandwidth-log":       "not supported; --interval of fsbench bench records a series",
	"write_bw_log":        "not supported",
	"status-interval":     "not supported",
	"debug":               "not supported",
	"cmdhelp":             "see docs/fio.md for the options fsbench fio takes",
	"enghelp":             "see docs/fio.md for the engines fsbench fio takes",
	"showcmd":             "not supported",
	"version":             "see fsbench --version",
	"terse-version":       "not supported",
	"aux-path":            "not supported",
	"alloc-size":          "not supported",
	"max-jobs":            "not supported",
	"trigger":             "not supported",
	"trigger-file":        "not supported",
	"trigger-timeout":     "not supported",
	"idle-prof":           "not supported",
	"inflate-log":         "not supported",
	"merge-blktrace-only": "not supported",
	"crctest":             "not supported",
	"daemonize":           "not supported",
	"warnings-fatal":      "not supported",
	"latency-log":         "not supported",
	"append-terse":        "not supported",
	"complete_latency":    "not supported",
	"help":                "see fsbench fio --help",
}

// maxJobFile bounds the size of a job file read.
const maxJobFile = 16 << 20

// ReadJobFile reads a job file (or an included one): a regular file of at
// most 16 MiB, so that a device or a pipe given by mistake is refused
// rather than read without end.
func ReadJobFile(name string) ([]byte, error) {
	st, err := os.Stat(name)
	switch {
	case err != nil:
		return nil, err
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file", name)
	case st.Size() > maxJobFile:
		return nil, fmt.Errorf("%s is larger than %d MiB: not a job file", name, maxJobFile>>20)
	}
	return os.ReadFile(name)
}
