// Package vdbjob reads vdbench parameter files (hd=, fsd=, fwd= and rd=
// lines) into fsbench's workload (jobfile.Job), with vdbench's defaults
// and units, and refuses by name every parameter it cannot honour before
// anything runs. The job then runs as any workload file does.
//
// It runs nothing, and never ignores a parameter: one it cannot honour is an
// error.
package vdbjob

import (
	"fmt"
	"regexp"
	"strings"
)

// Error is a mistake in, or a refusal of, a parameter file: at a line
// when it has one.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// Source is one parameter file: its name (for messages) and content.
type Source struct {
	Name string
	Data []byte
}

// param is one keyword=value of a definition.
type param struct {
	key, value string
	line       int
}

// def is one definition: its kind (hd, fsd, fwd, rd, or "" for general
// parameters), its name (the value of the first parameter) and the
// parameters after it.
type def struct {
	kind, name string
	params     []param
	file       string
	line       int
}

// errf is an error at line of the definition's file.
func (d *def) errf(line int, format string, args ...any) error {
	return &Error{d.file, line, fmt.Sprintf(format, args...)}
}

var varRE = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`)

// logicalLines joins a file's lines into parameter lines: comment lines
// (first character *, / or #) and blank lines are skipped; a line ending
// in a comma, or one starting with a comma, continues the line before.
// Each comes with the number of the line it starts on.
func logicalLines(src Source, vars map[string]string) ([]param, error) {
	var out []param
	cont := false
	for i, raw := range strings.Split(string(src.Data), "\n") {
		n := i + 1
		line := strings.TrimSpace(strings.TrimSuffix(raw, "\r"))
		if line == "" || strings.ContainsAny(line[:1], "*/#") {
			continue
		}
		var err error
		if line, err = substitute(line, vars); err != nil {
			return nil, &Error{src.Name, n, err.Error()}
		}
		if (cont || line[0] == ',') && len(out) > 0 {
			last := &out[len(out)-1]
			last.value = strings.TrimSuffix(last.value, ",") + "," + strings.TrimPrefix(line, ",")
		} else {
			out = append(out, param{value: line, line: n})
		}
		cont = strings.HasSuffix(line, ",")
	}
	return out, nil
}

// substitute replaces $name (or ${name}) by the value given on the
// command line as name=value, as vdbench does.
func substitute(line string, vars map[string]string) (string, error) {
	var err error
	out := varRE.ReplaceAllStringFunc(line, func(m string) string {
		name := varRE.FindStringSubmatch(m)[1]
		v, ok := vars[strings.ToLower(name)]
		if !ok && err == nil {
			err = fmt.Errorf("$%s is not given: add %s=VALUE after the parameter file on the command line", name, name)
		}
		return v
	})
	return out, err
}

// split cuts a parameter line into keyword=value pairs at commas and
// blanks outside parentheses: fwd=(a,b) is one pair.
func split(line string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i <= len(line); i++ {
		if i < len(line) {
			switch c := line[i]; {
			case c == '(':
				depth++
				continue
			case c == ')':
				depth = max(0, depth-1)
				continue
			case depth > 0 || c != ',' && c != ' ' && c != '\t':
				continue
			}
		}
		if tok := strings.TrimSpace(line[start:i]); tok != "" {
			out = append(out, tok)
		}
		start = i + 1
	}
	return out
}

// kinds are the definitions a parameter file holds, by their first
// keyword; general parameters stand alone.
var kinds = map[string]bool{"hd": true, "fsd": true, "fwd": true, "rd": true, "sd": true, "wd": true, "rg": true}

// parseDefs reads the definitions of the files, in order.
func parseDefs(srcs []Source, vars map[string]string) ([]*def, error) {
	var defs []*def
	for _, src := range srcs {
		lines, err := logicalLines(src, vars)
		if err != nil {
			return nil, err
		}
		for _, l := range lines {
			d, err := parseDef(src.Name, l)
			if err != nil {
				return nil, err
			}
			defs = append(defs, d)
		}
	}
	return defs, nil
}

func parseDef(file string, l param) (*def, error) {
	d := &def{file: file, line: l.line}
	for i, tok := range split(l.value) {
		k, v, ok := strings.Cut(tok, "=")
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		if !ok || k == "" {
			return nil, d.errf(l.line, "%q is not keyword=value", tok)
		}
		if i == 0 && kinds[k] {
			if v == "" {
				return nil, d.errf(l.line, "%s= needs a name", k)
			}
			d.kind, d.name = k, v
			continue
		}
		d.params = append(d.params, param{key: k, value: v, line: l.line})
	}
	return d, nil
}

// list reads a value that may be a list in parentheses: (a,b,c).
func list(v string) []string {
	if !strings.HasPrefix(v, "(") {
		return []string{v}
	}
	v = strings.TrimSuffix(strings.TrimPrefix(v, "("), ")")
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
