package object_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/pkg/object"
)

// benchStore opens a bucket of the shared MinIO server for benchmarks.
func benchStore(b *testing.B, tls bool) object.Storage {
	m := testenv.SharedMinIO(b, tls)
	cfg := object.Config{AccessKey: m.AccessKey, SecretKey: object.NewSecret(m.SecretKey), CACertFile: m.CACert, Threads: 4}
	s, err := object.Open(context.Background(), "minio", m.URL("bench"), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if err := s.Create(context.Background()); err != nil {
		b.Fatal(err)
	}
	return object.WithPrefix(s, fmt.Sprintf("bench-%d/", b.N))
}

// BenchmarkPutGet measures fsbench's own put and get path against a local
// MinIO: the client's cost per request (allocations, CPU), not the
// server's speed.
func BenchmarkPutGet(b *testing.B) {
	for _, tls := range []bool{false, true} {
		for _, size := range []int{128 << 10, 4 << 20} {
			name := fmt.Sprintf("%s/%dKiB", map[bool]string{false: "http", true: "https"}[tls], size>>10)
			buf := bytes.Repeat([]byte("fsbench!"), size/8)
			rbuf := make([]byte, size)
			b.Run("put/"+name, func(b *testing.B) {
				s := benchStore(b, tls)
				ctx := context.Background()
				b.SetBytes(int64(size))
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if err := s.Put(ctx, fmt.Sprintf("k%d", i%16), bytes.NewReader(buf)); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
			b.Run("get/"+name, func(b *testing.B) {
				s := benchStore(b, tls)
				ctx := context.Background()
				if err := s.Put(ctx, "g", bytes.NewReader(buf)); err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for b.Loop() {
					rc, err := s.Get(ctx, "g", 0, -1)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := io.ReadFull(rc, rbuf); err != nil {
						b.Fatal(err)
					}
					rc.Close()
				}
			})
		}
	}
}
