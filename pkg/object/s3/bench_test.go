package s3_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/pkg/object"
	"github.com/fsbench/fsbench/pkg/object/s3"
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

// BenchmarkSmallOps measures the client's cost of the requests a small-
// object benchmark repeats (put, get, head and delete of 4 KiB), through
// the direct path and through the SDK: allocations, and the CPU time of
// the whole process (the client alone: MinIO runs apart) per request.
func BenchmarkSmallOps(b *testing.B) {
	buf := bytes.Repeat([]byte("fsbench!"), 512)
	rbuf := make([]byte, len(buf))
	ops := map[string]func(s object.Storage, ctx context.Context) error{
		"put": func(s object.Storage, ctx context.Context) error { return s.Put(ctx, "small", bytes.NewReader(buf)) },
		"get": func(s object.Storage, ctx context.Context) error {
			rc, err := s.Get(ctx, "small", 0, -1)
			if err == nil {
				_, err = io.ReadFull(rc, rbuf)
				rc.Close()
			}
			return err
		},
		"head":   func(s object.Storage, ctx context.Context) error { _, err := s.Head(ctx, "small"); return err },
		"delete": func(s object.Storage, ctx context.Context) error { return s.Delete(ctx, "gone") },
	}
	for _, name := range []string{"put", "get", "head", "delete"} {
		for _, path := range []string{"direct", "sdk"} {
			b.Run(name+"/"+path, func(b *testing.B) {
				s := benchStore(b, false)
				if path == "sdk" {
					s3.SDKPath(s)
				}
				ctx := context.Background()
				if err := s.Put(ctx, "small", bytes.NewReader(buf)); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				cpu0 := processCPU()
				for b.Loop() {
					if err := ops[name](s, ctx); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// processCPU is the user and system time of this process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
