package fiojob

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fsbench/fsbench/internal/pattern"
	"github.com/fsbench/fsbench/internal/skew"
)

// fioJob is one of fio's jobs as its options set it, before it becomes a
// phase.
type fioJob struct {
	name, description, where string

	rw          string // read, write, randread, randwrite, rw, randrw
	bs          int64
	size        int64 // per job (clone); 0: not given
	fileSize    int64 // 0: not given
	nrfiles     int
	numjobs     int
	iodepth     int
	ioengine    string
	direct      bool
	runtime     time.Duration
	timeBased   bool
	rampTime    time.Duration
	readPct     int // -1: not given
	directory   string
	filename    string
	filenameFmt string
	rateBytes   int64
	rateIOPS    int64
	fsync       bool // end_fsync or fsync_on_close
	verify      bool
	doVerify    bool
	loops       int
	stonewall   bool
	fileService string
	dist        skew.Spec // random_distribution
	// buffer_compress_percentage and dedupe_percentage, as ratios (1: none)
	compress, dedupe float64
	kbBase           int64
	given            map[string]string // option (canonical name) -> where
}

func newFioJob(name, where string) *fioJob {
	return &fioJob{
		name: name, where: where, rw: "read", bs: 4096, nrfiles: 1, numjobs: 1, iodepth: 1,
		ioengine: "psync", readPct: -1, loops: 1, doVerify: true, fileService: "roundrobin",
		kbBase: 1024, given: map[string]string{},
	}
}

// handler sets one option of a job from its value.
type handler func(j *fioJob, v string) error

// flagOption marks the options that may be given without a value (as 1).
type optionSpec struct {
	set  handler
	flag bool // a boolean: the key alone means 1
}

// aliases are fio's other names of an option.
var aliases = map[string]string{
	"readwrite": "rw", "blocksize": "bs", "timeout": "runtime", "filesize": "filesize",
	"nr_files": "nrfiles", "nrfile": "nrfiles", "rwmixread": "rwmixread", "threads": "thread",
	"ba": "blockalign", "io_limit": "io_size", "rate_min": "ratemin", "ss": "steadystate",
}

// canonical is the name an option is known by.
func canonical(key string) string {
	if a, ok := aliases[key]; ok {
		return a
	}
	return key
}

// takesValue reports whether --key on the command line reads the next
// argument as its value.
func takesValue(key string) bool {
	spec, ok := options[canonical(key)]
	return !ok || !spec.flag
}

func sizeOpt(dst func(*fioJob) *int64) handler {
	return func(j *fioJob, v string) error {
		n, err := parseSize(v, j.kbBase)
		if err != nil {
			return err
		}
		*dst(j) = n
		return nil
	}
}

func boolOpt(dst func(*fioJob) *bool) handler {
	return func(j *fioJob, v string) error {
		b, err := parseBool(v)
		*dst(j) = b
		return err
	}
}

func intOpt(dst func(*fioJob) *int, lo, hi int) handler {
	return func(j *fioJob, v string) error {
		n, err := parseInt(v, lo, hi)
		*dst(j) = n
		return err
	}
}

func timeOpt(dst func(*fioJob) *time.Duration) handler {
	return func(j *fioJob, v string) error {
		d, err := parseTime(v, time.Second)
		*dst(j) = d
		return err
	}
}

func strOpt(dst func(*fioJob) *string) handler {
	return func(j *fioJob, v string) error {
		*dst(j) = v
		return nil
	}
}

// accepted takes an option that does not change what is measured.
func accepted(check func(string) error) handler {
	return func(_ *fioJob, v string) error {
		if check != nil {
			return check(v)
		}
		return nil
	}
}

// only accepts the values listed, refusing the others with why.
func only(why string, values ...string) func(string) error {
	return func(v string) error {
		for _, ok := range values {
			if strings.EqualFold(v, ok) {
				return nil
			}
		}
		return fmt.Errorf("%s", why)
	}
}

// options are the job options fsbench fio takes, by canonical name.
var options map[string]optionSpec

func init() {
	options = map[string]optionSpec{
		"name":                       {set: strOpt(func(j *fioJob) *string { return &j.name })},
		"description":                {set: strOpt(func(j *fioJob) *string { return &j.description })},
		"rw":                         {set: setRW},
		"bs":                         {set: setBS},
		"bsrange":                    {set: setBSRange},
		"size":                       {set: setSize},
		"filesize":                   {set: setFileSize},
		"nrfiles":                    {set: intOpt(func(j *fioJob) *int { return &j.nrfiles }, 1, 1<<24)},
		"numjobs":                    {set: intOpt(func(j *fioJob) *int { return &j.numjobs }, 1, 4096)},
		"iodepth":                    {set: intOpt(func(j *fioJob) *int { return &j.iodepth }, 1, 4096)},
		"ioengine":                   {set: setEngine},
		"direct":                     {set: boolOpt(func(j *fioJob) *bool { return &j.direct }), flag: true},
		"buffered":                   {set: setBuffered, flag: true},
		"runtime":                    {set: timeOpt(func(j *fioJob) *time.Duration { return &j.runtime })},
		"time_based":                 {set: boolOpt(func(j *fioJob) *bool { return &j.timeBased }), flag: true},
		"ramp_time":                  {set: timeOpt(func(j *fioJob) *time.Duration { return &j.rampTime })},
		"startdelay":                 {set: setStartDelay},
		"rwmixread":                  {set: intOpt(func(j *fioJob) *int { return &j.readPct }, 0, 100)},
		"rwmixwrite":                 {set: setMixWrite},
		"directory":                  {set: setDirectory},
		"filename":                   {set: setFilename},
		"filename_format":            {set: strOpt(func(j *fioJob) *string { return &j.filenameFmt })},
		"rate":                       {set: setRate(func(j *fioJob) *int64 { return &j.rateBytes }, true)},
		"rate_iops":                  {set: setRate(func(j *fioJob) *int64 { return &j.rateIOPS }, false)},
		"rate_process":               {set: accepted(only("fsbench schedules operations at even intervals (fio's linear); poisson is not supported", "linear"))},
		"thinktime":                  {set: zeroTime("thinktime", "fsbench's threads do not pause between operations")},
		"fsync":                      {set: zeroInt("fsync", "fsbench syncs a file once, before it closes it: use end_fsync=1 or fsync_on_close=1")},
		"fdatasync":                  {set: zeroInt("fdatasync", "fsbench syncs a file once, before it closes it: use end_fsync=1 or fsync_on_close=1")},
		"end_fsync":                  {set: setFsync, flag: true},
		"fsync_on_close":             {set: setFsync, flag: true},
		"create_on_open":             {set: accepted(boolCheck), flag: true},
		"fallocate":                  {set: accepted(only("fsbench writes into files it has not preallocated: give fallocate=none", "none", "0"))},
		"openfiles":                  {set: accepted(intCheck(1, 1<<24))},
		"file_service_type":          {set: strOpt(func(j *fioJob) *string { return &j.fileService })},
		"random_distribution":        {set: setDistribution},
		"buffer_compress_percentage": {set: setPercent(func(j *fioJob) *float64 { return &j.compress })},
		"dedupe_percentage":          {set: setPercent(func(j *fioJob) *float64 { return &j.dedupe })},
		"dedupe_mode":                {set: accepted(only("fsbench's copies are of a few blocks shared by the run, as fio's repeat mode; working_set is not supported", "repeat"))},
		"buffer_compress_chunk":      {set: accepted(only("fsbench compresses each 4 KiB block alike: give buffer_compress_chunk=4k", "4k", "4096", "4ki"))},
		"randrepeat":                 {set: accepted(boolCheck), flag: true},
		"norandommap":                {set: accepted(boolCheck), flag: true},
		"verify":                     {set: setVerify},
		"do_verify":                  {set: boolOpt(func(j *fioJob) *bool { return &j.doVerify }), flag: true},
		"thread":                     {set: accepted(boolCheck), flag: true},
		"group_reporting":            {set: accepted(boolCheck), flag: true},
		"new_group":                  {set: accepted(boolCheck), flag: true},
		"stonewall":                  {set: boolOpt(func(j *fioJob) *bool { return &j.stonewall }), flag: true},
		"loops":                      {set: intOpt(func(j *fioJob) *int { return &j.loops }, 1, 1<<30)},
		"kb_base":                    {set: setKBBase},
		"invalidate":                 {set: accepted(boolCheck), flag: true},
		"unit_base":                  {set: accepted(only("fsbench reports bytes", "0", "8"))},
	}
}

// setPercent reads a percentage of the data that compresses or repeats
// away (fio's buffer_compress_percentage, dedupe_percentage) as a ratio.
func setPercent(dst func(*fioJob) *float64) handler {
	return func(j *fioJob, v string) error {
		n, err := parseInt(v, 0, 99)
		if err != nil {
			return fmt.Errorf("%v (fsbench keeps at least 1%% of each block)", err)
		}
		*dst(j) = pattern.RatioOfPercent(float64(n))
		return nil
	}
}

// fio's parameters of a distribution named alone.
var fioDistDefaults = map[string]string{"zipf": "zipf:1.1", "pareto": "pareto:0.2"}

// setDistribution reads random_distribution into fsbench's distribution,
// with fio's defaults for zipf and pareto named alone; the forms fsbench
// cannot draw (zoned_abs, a zipf's centre, a zone list per direction)
// are refused by skew's message.
func setDistribution(j *fioJob, v string) error {
	if d, ok := fioDistDefaults[strings.ToLower(v)]; ok {
		v = d
	}
	if strings.HasPrefix(strings.ToLower(v), "zoned_abs") {
		return fmt.Errorf("zoned_abs: fsbench's zones are percentages of the file: give zoned:ACCESS%%/SIZE%%:...")
	}
	d, err := skew.Parse(v)
	if err != nil {
		return err
	}
	j.dist = d
	return nil
}

func boolCheck(v string) error { _, err := parseBool(v); return err }

func intCheck(lo, hi int) func(string) error {
	return func(v string) error { _, err := parseInt(v, lo, hi); return err }
}

func zeroTime(name, why string) handler {
	return func(j *fioJob, v string) error {
		d, err := parseTime(v, time.Microsecond)
		if err != nil {
			return err
		}
		if d != 0 {
			return fmt.Errorf("%s", why)
		}
		return nil
	}
}

func zeroInt(name, why string) handler {
	return func(j *fioJob, v string) error {
		n, err := parseInt(v, 0, 1<<30)
		if err != nil {
			return err
		}
		if n != 0 {
			return fmt.Errorf("%s", why)
		}
		return nil
	}
}

// fio's operations and what they are in fsbench's jobs.
var rwNames = map[string]string{
	"read": "read", "write": "write", "randread": "randread", "randwrite": "randwrite",
	"rw": "rw", "readwrite": "rw", "randrw": "randrw",
}

func setRW(j *fioJob, v string) error {
	op, suffix, has := strings.Cut(strings.ToLower(v), ":")
	name, ok := rwNames[op]
	if !ok {
		switch op {
		case "trim", "randtrim", "trimwrite", "randtrimwrite":
			return fmt.Errorf("rw=%s: fsbench does not trim", op)
		}
		return fmt.Errorf("rw=%s: want read, write, randread, randwrite, rw (readwrite) or randrw", v)
	}
	if has {
		random := strings.HasPrefix(name, "rand")
		if random {
			n, err := parseInt(suffix, 0, 1<<30)
			if err != nil {
				return fmt.Errorf("rw=%s: %v", v, err)
			}
			if n > 1 {
				return fmt.Errorf("rw=%s: fsbench picks a new random offset for every operation; runs of %d sequential operations are not supported", v, n)
			}
		} else {
			n, err := parseSize(strings.TrimPrefix(suffix, "-"), j.kbBase)
			if err != nil {
				return fmt.Errorf("rw=%s: %v", v, err)
			}
			if n != 0 {
				return fmt.Errorf("rw=%s: fsbench reads and writes without holes; skipping %s after each operation is not supported", v, suffix)
			}
		}
	}
	j.rw = name
	return nil
}

// oneOrSame reads fio's "read,write[,trim]" list of sizes: fsbench has one
// size for every direction.
func oneOrSame(j *fioJob, key, v string) (int64, error) {
	var first int64 = -1
	for _, part := range strings.Split(v, ",") {
		if part == "" {
			continue
		}
		n, err := parseSize(part, j.kbBase)
		if err != nil {
			return 0, err
		}
		if first >= 0 && n != first {
			return 0, fmt.Errorf("%s=%s: fsbench uses one size for reads and writes", key, v)
		}
		first = n
	}
	if first < 0 {
		return 0, fmt.Errorf("%s needs a value", key)
	}
	return first, nil
}

func setBS(j *fioJob, v string) error {
	n, err := oneOrSame(j, "bs", v)
	if err == nil && n == 0 {
		err = fmt.Errorf("bs must be more than 0")
	}
	j.bs = n
	return err
}

func setBSRange(j *fioJob, v string) error {
	for _, part := range strings.Split(v, ",") {
		lo, hi, ok := strings.Cut(part, "-")
		if !ok {
			lo, hi, ok = strings.Cut(part, ":")
		}
		if !ok {
			return fmt.Errorf("bsrange=%s: want LOW-HIGH, e.g. 4k-4k", v)
		}
		a, err := parseSize(lo, j.kbBase)
		if err != nil {
			return err
		}
		b, err := parseSize(hi, j.kbBase)
		if err != nil {
			return err
		}
		if a != b {
			return fmt.Errorf("bsrange=%s: fsbench uses one transfer size; give bsrange with equal bounds, or bs", v)
		}
		if err := setBS(j, lo); err != nil {
			return err
		}
	}
	return nil
}

func setSize(j *fioJob, v string) error {
	if strings.HasSuffix(v, "%") {
		return fmt.Errorf("size=%s: a share of a device or file is not supported; give bytes", v)
	}
	return sizeOpt(func(j *fioJob) *int64 { return &j.size })(j, v)
}

func setFileSize(j *fioJob, v string) error {
	if strings.ContainsAny(v, "-:") {
		return fmt.Errorf("filesize=%s: fsbench's files have one size; a range is not supported", v)
	}
	return sizeOpt(func(j *fioJob) *int64 { return &j.fileSize })(j, v)
}

// engines are the ioengines fsbench fio runs.
var engines = map[string]bool{"sync": true, "psync": true, "vsync": true, "pvsync": true, "pvsync2": true,
	"libaio": true, "posixaio": true, "io_uring": true}

func setEngine(j *fioJob, v string) error {
	e := strings.ToLower(v)
	if !engines[e] {
		return fmt.Errorf("ioengine=%s: fsbench does file I/O with sync, psync, pvsync, libaio, posixaio or io_uring", v)
	}
	j.ioengine = e
	return nil
}

func setBuffered(j *fioJob, v string) error {
	b, err := parseBool(v)
	j.direct = !b
	return err
}

func setStartDelay(j *fioJob, v string) error {
	d, err := parseTime(v, time.Second)
	if err != nil {
		return err
	}
	if d != 0 {
		return fmt.Errorf("startdelay=%s: fsbench starts a phase's threads together", v)
	}
	return nil
}

func setMixWrite(j *fioJob, v string) error {
	n, err := parseInt(v, 0, 100)
	if err != nil {
		return err
	}
	if _, ok := j.given["rwmixread"]; ok && j.readPct != 100-n {
		return fmt.Errorf("rwmixwrite=%d and rwmixread=%d do not add up to 100", n, j.readPct)
	}
	j.readPct = 100 - n
	return nil
}

func setDirectory(j *fioJob, v string) error {
	if strings.Contains(v, ":") {
		return fmt.Errorf("directory=%s: fsbench runs in one directory", v)
	}
	j.directory = v
	return nil
}

func setFilename(j *fioJob, v string) error {
	if strings.Contains(v, ":") {
		return fmt.Errorf("filename=%s: fsbench runs on files of its own in one directory; several files are not supported (use nrfiles)", v)
	}
	if strings.HasPrefix(v, "/dev/") {
		return fmt.Errorf("filename=%s: fsbench does not write to devices; it works on files of its own in a directory (give directory=)", v)
	}
	j.filename = v
	return nil
}

func setRate(dst func(*fioJob) *int64, bytes bool) handler {
	return func(j *fioJob, v string) error {
		key := "rate_iops"
		if bytes {
			key = "rate"
		}
		var n int64
		var err error
		if bytes {
			n, err = oneOrSame(j, key, v)
		} else {
			n, err = oneOrSameCount(v)
		}
		*dst(j) = n
		return err
	}
}

// oneOrSameCount reads fio's "read,write" list of counts (rate_iops).
func oneOrSameCount(v string) (int64, error) {
	var first = -1
	for _, part := range strings.Split(v, ",") {
		if part == "" {
			continue
		}
		n, err := parseInt(part, 0, 1<<30)
		if err != nil {
			return 0, err
		}
		if first >= 0 && n != first {
			return 0, fmt.Errorf("rate_iops=%s: fsbench has one rate for reads and writes", v)
		}
		first = n
	}
	return int64(max(first, 0)), nil
}

func setFsync(j *fioJob, v string) error {
	b, err := parseBool(v)
	j.fsync = j.fsync || b
	return err
}

// verifies are the verify= methods fsbench takes: it checks every byte
// read against what it wrote, whichever fio would compute.
var verifies = map[string]bool{"crc32c": true, "crc32c-intel": true, "md5": true, "sha256": true, "pattern": true}

func setVerify(j *fioJob, v string) error {
	switch strings.ToLower(v) {
	case "0", "null", "":
		j.verify = false
		return nil
	}
	if !verifies[strings.ToLower(v)] {
		return fmt.Errorf("verify=%s: fsbench checks every byte read against what it wrote; it takes verify=crc32c, md5, sha256 or pattern", v)
	}
	j.verify = true
	return nil
}

func setKBBase(j *fioJob, v string) error {
	switch v {
	case "1024":
		j.kbBase = 1024
	case "1000":
		j.kbBase = 1000
	default:
		return fmt.Errorf("kb_base=%s: want 1024 or 1000", v)
	}
	return nil
}

// set applies one option to the job, refusing the options fsbench does
// not take by name.
func (j *fioJob) set(o Option) error {
	key := canonical(o.Key)
	spec, ok := options[key]
	if !ok {
		if why, known := refused[key]; known {
			return fmt.Errorf("%s: %s: %s", o.Where, o.Key, why)
		}
		return fmt.Errorf("%s: fio option %s is not supported by fsbench fio (docs/fio.md lists those it takes)", o.Where, o.Key)
	}
	v := o.Value
	if !o.HasValue {
		if !spec.flag {
			return fmt.Errorf("%s: %s needs a value (%s=VALUE)", o.Where, o.Key, o.Key)
		}
		v = "1"
	}
	if err := spec.set(j, v); err != nil {
		msg := err.Error()
		if !strings.HasPrefix(msg, o.Key) && !strings.HasPrefix(msg, key) {
			msg = o.Key + "=" + v + ": " + msg
		}
		return fmt.Errorf("%s: %s", o.Where, msg)
	}
	j.given[key] = o.Where
	return nil
}

// Supported lists the job options fsbench fio takes, sorted.
func Supported() []string {
	var out []string
	for k := range options {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Takes reports whether fsbench fio takes the option key on its command
// line: a job option it honours, or fio's own --output-format, --section
// or --eta.
func Takes(key string) bool {
	switch key {
	case "output-format", "section", "eta", "eta-newline", "eta-interval":
		return true
	}
	_, ok := options[canonical(strings.ToLower(key))]
	return ok
}
