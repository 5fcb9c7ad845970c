package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// fileAnnotation marks a flag whose value names a file the command reads
// (fileIn) or writes (fileOut), so that an output is never one of the
// inputs or another output.
const (
	fileAnnotation = "fsbench-file"
	fileIn         = "in"
	fileOut        = "out"
)

// markFiles marks the flags names of f as naming files read or written
// (dir is fileIn or fileOut).
func markFiles(f *pflag.FlagSet, dir string, names ...string) {
	for _, n := range names {
		if err := f.SetAnnotation(n, fileAnnotation, []string{dir}); err != nil {
			panic(fmt.Sprintf("mark --%s: %v", n, err)) // a flag that was never declared
		}
	}
}

// fileArg is a file named on the command line, by a flag or as an
// argument (flag "").
type fileArg struct{ flag, path string }

func (a fileArg) String() string {
	if a.flag == "" {
		return a.path
	}
	return "--" + a.flag + " " + a.path
}

// flagFiles returns the files that cmd's given flags read and write.
func flagFiles(cmd *cobra.Command) (ins, outs []fileArg) {
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		dir := fl.Annotations[fileAnnotation]
		if len(dir) == 0 {
			return
		}
		for _, p := range flagPaths(fl) {
			switch {
			case p == "" || p == "-":
			case dir[0] == fileOut:
				outs = append(outs, fileArg{fl.Name, p})
			default:
				ins = append(ins, fileArg{fl.Name, p})
			}
		}
	})
	return ins, outs
}

// flagPaths returns the values of a flag that names files.
func flagPaths(fl *pflag.Flag) []string {
	if sv, ok := fl.Value.(pflag.SliceValue); ok {
		return sv.GetSlice()
	}
	return []string{fl.Value.String()}
}

// checkFileFlags refuses a command line that gives a file flag no file
// (-f "", which would otherwise read as no -f at all), or whose output
// files overwrite one of its inputs or each other.
func checkFileFlags(cmd *cobra.Command) error {
	var empty error
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if len(fl.Annotations[fileAnnotation]) == 0 || empty != nil {
			return
		}
		for _, p := range flagPaths(fl) {
			if strings.TrimSpace(p) == "" {
				empty = Usagef("--%s names no file", fl.Name)
				return
			}
		}
	})
	if empty != nil {
		return empty
	}
	ins, outs := flagFiles(cmd)
	return checkOutputs(outs, ins)
}

// checkOutputs refuses an output that is one of the inputs (writing it
// would replace what was read) or another output (one would replace the
// other).
func checkOutputs(outs, ins []fileArg) error {
	for i, o := range outs {
		for _, in := range ins {
			if sameFile(o.path, in.path) {
				return Usagef("%s would overwrite the input %s: write it to another file", o, in)
			}
		}
		for _, other := range outs[:i] {
			if sameFile(o.path, other.path) {
				return Usagef("%s would overwrite %s: give each output a file of its own", o, other)
			}
		}
	}
	return nil
}

// sameFile reports whether a and b name one file: the same file where both
// exist, else the same name in the same directory.
func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	switch {
	case errA == nil && errB == nil:
		return os.SameFile(sa, sb)
	case errA == nil || errB == nil:
		return false
	}
	if filepath.Base(a) != filepath.Base(b) {
		return false
	}
	da, errA := os.Stat(filepath.Dir(a))
	db, errB := os.Stat(filepath.Dir(b))
	if errA == nil && errB == nil {
		return os.SameFile(da, db)
	}
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	return errA == nil && errB == nil && absA == absB
}
