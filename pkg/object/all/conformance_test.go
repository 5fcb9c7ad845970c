package all_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/pkg/object"
	"github.com/fsbench/fsbench/pkg/object/internal/storetest"
	"github.com/fsbench/fsbench/pkg/object/objecttest"
)

// The one conformance suite (objecttest) runs here against every driver,
// opened by name through the registry as users open them.

func TestMain(m *testing.M) { testenv.Main(m) }

func TestConformanceFile(t *testing.T) {
	s := storetest.Open(t, "file", t.TempDir()+"/store", object.Config{})
	objecttest.Run(t, s)
}

func TestConformanceMinIO(t *testing.T) {
	objecttest.Run(t, storetest.MinIO(t, false))
}

func TestConformanceMinIOTLS(t *testing.T) {
	objecttest.Run(t, storetest.MinIO(t, true))
}

func TestConformanceNFS(t *testing.T) {
	n := testenv.SharedNFS(t)
	// The driver creates no base directory: it is made here, as a user
	// would before a run.
	if err := os.MkdirAll(filepath.Join(n.Export, "conformance"), 0o777); err != nil {
		t.Fatal(err)
	}
	s := storetest.Open(t, "nfs", n.URL("conformance"), object.Config{})
	objecttest.Run(t, s)
}

// The S3 driver also serves plain "s3" against any endpoint, path-style.
func TestConformanceS3ProfileOnMinIO(t *testing.T) {
	m := testenv.SharedMinIO(t, false)
	cfg := object.Config{AccessKey: m.AccessKey, SecretKey: object.NewSecret(m.SecretKey), Getenv: func(string) string { return "" }}
	s := storetest.Open(t, "s3", m.URL("conformance-s3"), cfg)
	objecttest.Run(t, object.WithPrefix(s, storetest.UniquePrefix()))
}

// TestConformanceEveryDriver fails when a driver is registered that has no
// conformance test above, nor a reason why not.
func TestConformanceEveryDriver(t *testing.T) {
	tested := map[string]string{"file": "", "minio": "", "nfs": "", "s3": "",
		"cos": "the s3 driver's code with COS's URL forms and credentials; no COS server here"}
	for _, n := range object.Names() {
		if _, ok := tested[n]; !ok {
			t.Errorf("driver %s has no conformance test", n)
		}
	}
}
