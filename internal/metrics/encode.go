package metrics

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"math"
	"sync"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// The cookies of HdrHistogram's V2 encoding: the payload's, inside the
// compressed contents, and the compressed form's, outside.
const (
	v2Cookie           = hdrhistogram.V2EncodingCookieBase | 0x10
	v2CompressedCookie = hdrhistogram.V2CompressedEncodingCookieBase | 0x10
)

// zlibWriters are kept between encodings: a new zlib writer is most of a
// megabyte of state to allocate and clear.
var zlibWriters = sync.Pool{New: func() any {
	w, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
	return w
}}

// encodeV2 writes h in HdrHistogram's V2 compressed encoding, base64, as
// the library's Encode does and with the same payload, compressed at zlib's
// fastest level by a kept writer. The library's Encode makes a new writer
// at its best compression for every histogram: at the end of a run on
// 1,000 hosts, each host's histograms took most of a millisecond and a
// megabyte apiece, and the agents' process spent seconds in them and in
// collecting the garbage.
func encodeV2(h *hdrhistogram.Histogram) string {
	s := h.Export()
	counts := appendCounts(nil, s.Counts)
	ratio := s.IntegerToDoubleConversionRatio
	if ratio == 0 {
		ratio = 1
	}
	be := binary.BigEndian
	payload := be.AppendUint32(nil, uint32(v2Cookie))
	payload = be.AppendUint32(payload, uint32(len(counts)))
	payload = be.AppendUint32(payload, 0) // the normalizing index offset
	payload = be.AppendUint32(payload, uint32(s.SignificantFigures))
	payload = be.AppendUint64(payload, uint64(s.LowestTrackableValue))
	payload = be.AppendUint64(payload, uint64(s.HighestTrackableValue))
	payload = be.AppendUint64(payload, math.Float64bits(ratio))
	payload = append(payload, counts...)

	var z bytes.Buffer
	w := zlibWriters.Get().(*zlib.Writer)
	w.Reset(&z)
	_, _ = w.Write(payload)
	_ = w.Close()
	zlibWriters.Put(w)

	out := be.AppendUint32(nil, uint32(v2CompressedCookie))
	out = be.AppendUint32(out, uint32(z.Len()))
	out = append(out, z.Bytes()...)
	return base64.StdEncoding.EncodeToString(out)
}

// appendCounts appends the V2 payload's counts up to the last that is not
// zero (one count, zero, when all are): each a ZigZag LEB128 of at most 9
// bytes, a run of more than one zero as the run's length negated.
func appendCounts(b []byte, counts []int64) []byte {
	limit := 1
	for i := len(counts) - 1; i > 0; i-- {
		if counts[i] != 0 {
			limit = i + 1
			break
		}
	}
	for i := 0; i < limit; {
		if counts[i] != 0 {
			b = appendZigZag(b, counts[i])
			i++
			continue
		}
		zeros := int64(0)
		for i < limit && counts[i] == 0 {
			zeros++
			i++
		}
		if zeros > 1 {
			b = appendZigZag(b, -zeros)
		} else {
			b = appendZigZag(b, 0)
		}
	}
	return b
}

// appendZigZag appends v ZigZag-encoded as a LEB128 of at most 9 bytes:
// the ninth, when there is one, holds the top 8 bits whole.
func appendZigZag(b []byte, v int64) []byte {
	u := uint64((v << 1) ^ (v >> 63))
	for n := 0; n < 8; n++ {
		if u>>7 == 0 {
			return append(b, byte(u))
		}
		b = append(b, byte(u&0x7f|0x80))
		u >>= 7
	}
	return append(b, byte(u))
}
