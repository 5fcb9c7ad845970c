// Package fiojob reads fio's inputs, its job files and its command line,
// into fsbench's job (jobfile.Job): fio's defaults and units, one phase a
// group of jobs that fio runs at the same time, and every option fsbench
// cannot honour refused by name before anything runs.
//
//	[global]
//	directory=/mnt/jfs
//	bs=1m
//	size=${SIZE}
//	numjobs=4
//	direct=1
//
//	[seq-write]
//	rw=write
//
//	[seq-read]
//	stonewall
//	rw=read
//
// It runs nothing and never changes the meaning of an option silently: an
// option it cannot honour is an error, never ignored.
package fiojob

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Option is one option of a job: key=value, or a key alone (a flag such
// as time_based); Where says where it was given, for messages.
type Option struct {
	Key, Value string
	HasValue   bool
	Where      string
}

func (o Option) String() string {
	if o.HasValue {
		return o.Key + "=" + o.Value
	}
	return o.Key
}

// Section is a job of fio's input, or [global]: its options in the order
// given.
type Section struct {
	Name    string
	Options []Option
	Where   string
}

// Global reports whether s holds options for every job after it.
func (s *Section) Global() bool { return s.Name == "global" }

// Input is what fio was given: its sections in order, and the options of
// fio itself (output-format, section).
type Input struct {
	Sections []Section
	// OutputFormat is --output-format: normal or json ("" when not given).
	OutputFormat string
	// Only lists the sections --section selects (all when empty).
	Only []string
	// Files are the job files read.
	Files []string
}

// Env looks up an environment variable; ok is false when it is not set.
type Env func(name string) (string, bool)

// maxIncludeDepth bounds include chains (a file including itself).
const maxIncludeDepth = 16

// ParseFile reads a fio job file: [sections] of key=value lines, ; and #
// comments, include lines, and $VAR or ${VAR} from env. name is the file's
// path, for messages and for includes relative to it; read reads an
// included file.
func ParseFile(data []byte, name string, env Env, read func(string) ([]byte, error)) ([]Section, error) {
	p := &iniParser{env: env, read: read}
	if err := p.parse(data, name, 0); err != nil {
		return nil, err
	}
	return p.secs, nil
}

type iniParser struct {
	env  Env
	read func(string) ([]byte, error)
	secs []Section
}

var sectionRE = regexp.MustCompile(`^\[([^\]]*)\]$`)

func (p *iniParser) parse(data []byte, name string, depth int) error {
	if depth > maxIncludeDepth {
		return fmt.Errorf("%s: includes nest more than %d deep", name, maxIncludeDepth)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		where := fmt.Sprintf("%s:%d", name, n)
		line := stripComment(sc.Text())
		if line == "" {
			continue
		}
		if m := sectionRE.FindStringSubmatch(line); m != nil {
			sname := strings.TrimSpace(m[1])
			if sname == "" {
				return fmt.Errorf("%s: a section needs a name: [name]", where)
			}
			p.secs = append(p.secs, Section{Name: sname, Where: where})
			continue
		}
		if inc, ok := strings.CutPrefix(line, "include "); ok {
			if err := p.include(strings.TrimSpace(inc), name, where, depth); err != nil {
				return err
			}
			continue
		}
		if len(p.secs) == 0 {
			return fmt.Errorf("%s: %q comes before any [section]", where, line)
		}
		o, err := parseOption(line, where, p.env)
		if err != nil {
			return err
		}
		s := &p.secs[len(p.secs)-1]
		s.Options = append(s.Options, o)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func (p *iniParser) include(file, from, where string, depth int) error {
	if file == "" {
		return fmt.Errorf("%s: include needs a file name", where)
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(filepath.Dir(from), file)
	}
	if p.read == nil {
		return fmt.Errorf("%s: include %s: includes are read from job files only", where, file)
	}
	data, err := p.read(file)
	if err != nil {
		return fmt.Errorf("%s: include: %w", where, err)
	}
	return p.parse(data, file, depth+1)
}

// stripComment removes a ; or # comment (a whole line, or after a blank)
// and the blanks around what is left.
func stripComment(line string) string {
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, ";") || strings.HasPrefix(line, "#") {
		return ""
	}
	for i := 1; i < len(line); i++ {
		if (line[i] == ';' || line[i] == '#') && (line[i-1] == ' ' || line[i-1] == '\t') {
			return strings.TrimSpace(line[:i])
		}
	}
	return line
}

// parseOption reads key=value or key, expanding the environment in the
// value.
func parseOption(s, where string, env Env) (Option, error) {
	key, val, has := strings.Cut(s, "=")
	key = strings.ToLower(strings.TrimSpace(key))
	if key == "" || strings.ContainsAny(key, " \t") {
		return Option{}, fmt.Errorf("%s: %q: want key=value", where, s)
	}
	o := Option{Key: key, HasValue: has, Where: where}
	if has {
		v, err := expand(strings.TrimSpace(val), env)
		if err != nil {
			return Option{}, fmt.Errorf("%s: %s: %v", where, key, err)
		}
		o.Value = v
	}
	return o, nil
}

// fio's own keywords in file names (filename_format) and expressions:
// they are not environment variables.
var fioKeywords = map[string]bool{
	"jobname": true, "jobnum": true, "filenum": true, "clientuid": true,
	"pagesize": true, "mb_memory": true, "ncpus": true,
}

var varRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)`)

// expand replaces ${VAR} and $VAR with the environment's values; a
// variable that is not set is an error (fio would run with the text).
func expand(v string, env Env) (string, error) {
	var err error
	out := varRE.ReplaceAllStringFunc(v, func(m string) string {
		sub := varRE.FindStringSubmatch(m)
		name := sub[1] + sub[2]
		if sub[2] != "" && fioKeywords[name] {
			return m
		}
		val, ok := "", false
		if env != nil {
			val, ok = env(name)
		}
		if !ok && err == nil {
			err = fmt.Errorf("%s is not set in the environment", m)
		}
		return val
	})
	return out, err
}

// OSEnv is the process's environment.
func OSEnv(name string) (string, bool) { return os.LookupEnv(name) }

// IsJobFile reports whether data reads as a fio job file: its first line
// that is not blank or a comment is a [section].
func IsJobFile(data []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if line := stripComment(sc.Text()); line != "" {
			return sectionRE.MatchString(line) && !strings.ContainsAny(line, ",:{")
		}
	}
	return false
}
