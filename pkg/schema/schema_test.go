package schema_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/fsbench/fsbench/internal/compare"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/pkg/schema"
)

func compile(t *testing.T, name string, data []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(name, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(name)
	if err != nil {
		t.Fatalf("compile %s: %v", name, err)
	}
	return s
}

func validate(t *testing.T, s *jsonschema.Schema, what string, data []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s is not JSON: %v\n%s", what, err, data)
	}
	return s.Validate(inst)
}

func resultSchema(t *testing.T) *jsonschema.Schema {
	return compile(t, "result.schema.json", schema.Result)
}

// TestBenchOutputValidates runs the real binary on a temporary directory,
// with expectations and a baseline, and validates its JSON.
func TestBenchOutputValidates(t *testing.T) {
	s := resultSchema(t)
	dir := t.TempDir()
	saved := filepath.Join(t.TempDir(), "saved.json")
	baseline := filepath.Join(testenv.RepoRoot(), "testdata", "compare", "old.json")
	cmd := exec.Command(testenv.Binary(t), "bench", dir, "-p", "2", "--big-file-size", "4M", "--small-file-count", "5",
		"--expect", "write-big>0B/s", "--expect", "stat.p99>=0us", "--expect", "errors==0",
		"--baseline", baseline, "--threshold", "100%", "--baseline-metrics", "throughput", "-q", "--json", "--result-file", saved)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("fsbench bench: %v\n%s", err, errb.String())
	}
	if err := validate(t, s, "bench output", out.Bytes()); err != nil {
		t.Fatalf("bench output does not match result.schema.json: %v\n%s", err, out.String())
	}
	var r report.Result
	if err := json.Unmarshal(out.Bytes(), &r); err != nil || len(r.Phases) != 5 || len(r.Expectations) != 4 {
		t.Errorf("result: %v, %d phases, %d expectations", err, len(r.Phases), len(r.Expectations))
	}
	b, err := os.ReadFile(saved)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(t, s, "result file", b); err != nil {
		t.Errorf("--result-file does not match result.schema.json: %v", err)
	}
}

// TestEveryFieldDocumented fills every field of the result model and
// validates it: the schema forbids unknown properties, so a field added to
// internal/report without a line in result.schema.json fails here.
func TestEveryFieldDocumented(t *testing.T) {
	s := resultSchema(t)
	var r report.Result
	fill(reflect.ValueOf(&r).Elem())
	r.SchemaVersion, r.Tool, r.Command, r.CacheDrop = report.SchemaVersion, "fsbench", "objbench", "fadvise"
	r.Parameters = report.Params{{Key: "threads", Value: 4}, {Key: "verify", Value: true}, {Key: "storage_class", Value: "STANDARD"}}
	r.Checks[0].Status = report.CheckNotSupport
	r.Phases[0].Name = "put-small"
	r.Phases[0].Value.Grade, r.Phases[0].Cost.Grade, r.Internal.Rows[0].Grade = report.Good, report.Fair, report.Poor
	r.Expectations[0].Op = "<="
	r.Phases[0].Spread.Confidence = 0.95
	r.Replay.Format = "juicefs"
	r.Expectations[0].Verdict = report.VerdictTooShort
	for _, t := range []*report.Training{r.Training, r.Runs[0].Training} {
		t.AUConfidence, t.Verdict = 0.95, report.VerdictFail
	}
	run := &r.Runs[0].Phases[0]
	run.Name, run.Value.Grade, run.Cost.Grade, run.Spread = "put-small", report.Good, report.Fair, nil
	b, err := json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(t, s, "full result", b); err != nil {
		t.Fatalf("a result with every field set does not match result.schema.json (document new fields there): %v\n%s", err, b)
	}
}

// fill sets every field reachable from v to a non-zero value.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(1)
	case reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Date(2026, 11, 21, 3, 0, 0, 0, time.UTC)))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	}
}

// TestSchemaRejects makes sure the schema is not vacuous.
func TestSchemaRejects(t *testing.T) {
	s := resultSchema(t)
	good, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "testdata", "compare", "old.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(t, s, "old.json", good); err != nil {
		t.Fatalf("fixture invalid: %v", err)
	}
	for name, edit := range map[string]func(m map[string]any){
		"unknown field":      func(m map[string]any) { m["surprise"] = 1 },
		"no schema_version":  func(m map[string]any) { delete(m, "schema_version") },
		"future version":     func(m map[string]any) { m["schema_version"] = 4 },
		"phase without name": func(m map[string]any) { delete(m["phases"].([]any)[0].(map[string]any), "name") },
		"negative bytes":     func(m map[string]any) { m["phases"].([]any)[0].(map[string]any)["bytes"] = -1 },
		"bad grade": func(m map[string]any) {
			m["phases"].([]any)[0].(map[string]any)["value"].(map[string]any)["grade"] = "great"
		},
		"latency as string": func(m map[string]any) {
			m["phases"].([]any)[0].(map[string]any)["latency"].(map[string]any)["p99_us"] = "5ms"
		},
		"bad started_at": func(m map[string]any) { m["started_at"] = "yesterday" },
	} {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		b, _ := json.Marshal(m)
		err := validate(t, s, name, b)
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("%s: accepted (err %v)", name, err)
		}
	}
}

func readErr(b []byte) error {
	_, err := report.ReadJSON(bytes.NewReader(b))
	return err
}

// TestFixturesValidate checks the result pairs of the compare tests, and
// compare's JSON output against compare.schema.json.
func TestFixturesValidate(t *testing.T) {
	s := resultSchema(t)
	dir := filepath.Join(testenv.RepoRoot(), "testdata", "compare")
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) < 4 {
		t.Fatalf("fixtures: %v", files)
	}
	results := map[string]*report.Result{}
	for _, f := range files {
		if strings.HasSuffix(f, "not-a-result.json") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(filepath.Base(f), "negative-") {
			// Results no run writes: the schema and the reader refuse them alike.
			if verr, rerr := validate(t, s, f, b), readErr(b); verr == nil || rerr == nil {
				t.Errorf("%s: schema %v, reader %v; want both to refuse it", f, verr, rerr)
			}
			continue
		}
		if err := validate(t, s, f, b); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		r, err := report.ReadJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		results[filepath.Base(f)] = r
	}
	cs := compile(t, "compare.schema.json", schema.Compare)
	ten := 10.0
	for _, pair := range [][2]string{{"old.json", "new-regression.json"}, {"old.json", "new-small-only.json"}} {
		for _, th := range []*float64{nil, &ten} {
			rep, err := compare.Compare(results[pair[0]], results[pair[1]], pair[0], pair[1], compare.Options{Threshold: th})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := compare.WriteJSON(&buf, rep); err != nil {
				t.Fatal(err)
			}
			if err := validate(t, cs, "comparison", buf.Bytes()); err != nil {
				t.Errorf("compare %v does not match compare.schema.json: %v\n%s", pair, err, buf.String())
			}
		}
	}
}

// TestReadOnlyOutputsValidate validates the results of the read-only runs
// (bench --read-existing, objbench --list-existing) made by the real binary.
func TestReadOnlyOutputsValidate(t *testing.T) {
	s := resultSchema(t)
	dir := t.TempDir()
	for name, n := range map[string]int{"a/small": 100, "b/big": 3 << 20} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"bench", dir, "--read-existing", "-p", "2", "--sample", "100%", "-q", "--json"},
		{"objbench", dir, "--list-existing", "--prefix", "a/", "-q", "--json"},
	} {
		cmd := exec.Command(testenv.Binary(t), args...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("fsbench %v: %v\n%s", args, err, errb.String())
		}
		if err := validate(t, s, args[0]+" output", out.Bytes()); err != nil {
			t.Errorf("fsbench %v output does not match result.schema.json: %v\n%s", args, err, out.String())
		}
	}
}
