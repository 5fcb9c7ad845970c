package objbench

import (
	"testing"

	"github.com/fsbench/fsbench/pkg/object"
)

// Whether payloads are signed is kept in the result, and shown on the
// header line of S3 runs only.
func TestParamsSignPayload(t *testing.T) {
	for _, c := range []struct {
		storage string
		sign    bool
		label   string
	}{
		{"minio", false, "SignPayload"},
		{"s3", true, "SignPayload"},
		{"nfs", false, ""},
		{"file", false, ""},
	} {
		o := Defaults()
		o.Storage, o.Object = c.storage, object.Config{SignPayload: c.sign}
		var found bool
		for _, p := range o.params() {
			if p.Key != "sign_payload" {
				continue
			}
			found = true
			if p.Value != c.sign || p.Label != c.label {
				t.Errorf("%s: sign_payload = %v labelled %q, want %v labelled %q", c.storage, p.Value, p.Label, c.sign, c.label)
			}
		}
		if !found {
			t.Errorf("%s: no sign_payload parameter", c.storage)
		}
	}
}
