package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/pkg/object"
)

// TestCapacityObjbenchMinIO: objbench's get workload against MinIO gives
// an SLO answer and a curve, in results that follow the schema and never
// show the secret.
func TestCapacityObjbenchMinIO(t *testing.T) {
	m := testenv.SharedMinIO(t, false)
	env := []string{"ACCESS_KEY=" + m.AccessKey, "SECRET_KEY=" + m.SecretKey}
	bucket := "curve-" + time.Now().Format("150405000000")
	s, err := object.Open(context.Background(), "minio", m.URL(bucket), object.Config{AccessKey: m.AccessKey, SecretKey: object.NewSecret(m.SecretKey)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Create(context.Background()); err != nil {
		t.Fatal(err)
	}
	base := []string{"objbench", "--storage", "minio", m.URL(bucket), "--workload", "get", "--objects", "40", "--obj-size", "4K",
		"--duration", "300ms", "-p", "2", "--skip-functional-tests", "-q", "-o", "json"}
	for _, extra := range [][]string{{"--slo", "p99<2s", "--expect", "capacity>=1ops/s"}, {"--curve=50,100"}} {
		stdout, stderr, code := runFsbenchEnv(t, env, append(base, extra...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, stderr)
		}
		if strings.Contains(stdout+stderr, m.SecretKey) {
			t.Errorf("%v: the secret key is in the output", extra)
		}
		checkSchema(t, "objbench "+extra[0], []byte(stdout))
		r, err := report.ReadJSON(strings.NewReader(stdout))
		if err != nil {
			t.Fatal(err)
		}
		c := r.Capacity
		if c == nil || c.Phase != "get" || c.MaxOpsPerSec <= 0 {
			t.Fatalf("%v: capacity %+v", extra, c)
		}
		if extra[0] == "--slo" {
			if c.Answer == nil || c.Answer.OpsPerSec <= 0 || c.Answer.Latency.P99 >= 2e6 || r.FindPhase("get") == nil {
				t.Errorf("--slo: answer %+v", c.Answer)
			}
			continue
		}
		if len(c.Steps) != 3 || r.FindPhase("get.50pct") == nil || r.FindPhase("get.100pct") == nil || c.Steps[1].BytesPerSec <= 0 {
			t.Errorf("--curve: %d steps, phases %d", len(c.Steps), len(r.Phases))
		}
	}
}
