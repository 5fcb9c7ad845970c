package report

import (
	"bytes"
	"strings"
	"testing"
)

// A phase run through several endpoints has a row per endpoint under it,
// with as many columns as the table, in the plain and the verbose table.
func TestEndpointRows(t *testing.T) {
	r := &Result{Phases: []PhaseResult{{Name: "put", Title: "put objects", Ops: 30,
		Value: Measure{Value: 12, Unit: "MiB/s"}, Cost: Measure{Value: 3, Unit: "ms/op"},
		Endpoints: []EndpointRow{
			{Endpoint: "http://10.0.0.1:9000", Requests: 15, BytesPerSec: 6 << 20, MeanMs: 2.5},
			{Endpoint: "http://10.0.0.2:9000", Requests: 15, Errors: 2, BytesPerSec: 3 << 20, MeanMs: 9.25},
		}}}}
	for _, verbose := range []bool{false, true} {
		var b bytes.Buffer
		if err := WriteTable(&b, r, Options{Verbose: verbose}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		// The verbose table is wider: there the cell wraps after "requests,".
		for _, want := range []string{"http://10.0.0.1:9000", "6.00 MiB/s", "2.50 ms/req", "endpoint: 15 requests",
			"http://10.0.0.2:9000", "3.00 MiB/s", "9.25 ms/req", "endpoint: 15 requests,", "2 errors"} {
			if !strings.Contains(out, want) {
				t.Errorf("verbose=%v: the table lacks %q:\n%s", verbose, want, out)
			}
		}
	}
}
