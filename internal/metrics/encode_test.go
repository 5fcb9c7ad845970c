package metrics

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// payload is the uncompressed V2 payload of an encoded histogram.
func payload(t *testing.T, enc string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(enc)
	if err != nil || len(b) < 8 {
		t.Fatalf("not base64 of an encoding: %v", err)
	}
	z, err := zlib.NewReader(bytes.NewReader(b[8:]))
	if err != nil {
		t.Fatal(err)
	}
	p, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestEncodeAsTheLibrary: the encoding carries, byte for byte, the payload
// the HdrHistogram library's own Encode writes (only the compression
// differs), and the library decodes it to the same counts: empty
// histograms, one value, values at both ends of the range, runs of zeros
// and counts large enough to need all nine bytes of a count.
func TestEncodeAsTheLibrary(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for i := range 200 {
		h := hdrhistogram.New(minLatency, maxLatency, sigFigs)
		switch i {
		case 0: // empty
		case 1:
			h.RecordValue(minLatency)
		case 2:
			h.RecordValue(maxLatency)
			h.RecordValues(minLatency, 1<<62) // ZigZag: 2^63, a ninth byte of 8 bits
		default:
			for range r.IntN(5000) {
				h.RecordValue(minLatency + r.Int64N(r.Int64N(maxLatency-minLatency)+1))
			}
		}
		lib, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		ours := encodeV2(h)
		if !bytes.Equal(payload(t, ours), payload(t, string(lib))) {
			t.Fatalf("histogram %d: the payload differs from the library's", i)
		}
		back, err := hdrhistogram.Decode([]byte(ours))
		if err != nil || back.TotalCount() != h.TotalCount() || !slices.Equal(back.Export().Counts, h.Export().Counts) {
			t.Fatalf("histogram %d: decoded to other counts (%v)", i, err)
		}
	}
}
