package report

import (
	"bytes"
	"strings"
	"testing"
)

func i64(v int64) *int64 { return &v }

func TestOriginTable(t *testing.T) {
	r := sample()
	r.Phases[1].Origin = &Origin{Source: "block device loop0 (7:0)", ReadBytes: 400 << 17,
		StorageBytes: i64(2 << 20), PageCacheBytes: i64(400 << 17)}
	r.Phases[1].Origin.SetFromStorage()
	var b bytes.Buffer
	if err := WriteTable(&b, r, Options{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "bench-origin.table.golden", b.Bytes())
	var plain bytes.Buffer
	if err := WriteTable(&plain, sample(), Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "Origin") {
		t.Errorf("a result without origins shows one:\n%s", plain.String())
	}
}

func TestOriginLineUnknown(t *testing.T) {
	p := PhaseResult{Title: "Read big file", Origin: &Origin{ReadBytes: 1 << 20, PageCacheBytes: i64(1 << 20), Unknown: "tmpfs on /dev/shm has no block device (source tmpfs)"}}
	p.Origin.SetFromStorage()
	want := "Read big file: from storage unknown (tmpfs on /dev/shm has no block device (source tmpfs)); page cache before: 1 MiB"
	if got := OriginLine(&p); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestMergeOrigins(t *testing.T) {
	part := func(read, storage int64) PhaseResult {
		o := &Origin{Source: "block device vda (254:0)", ReadBytes: read, StorageBytes: i64(storage), PageCacheBytes: i64(0)}
		o.SetFromStorage()
		return PhaseResult{Name: "read-big", Origin: o}
	}
	m := MergeOrigins([]PhaseResult{part(100, 100), part(100, 0)})
	if m == nil || m.ReadBytes != 200 || *m.StorageBytes != 100 || *m.FromStorage != 50 || m.Source != "block device vda (254:0)" {
		t.Fatalf("merged %+v: want 100 of 200 bytes, 50%%, one source", m)
	}
	if m.CacheBytes != nil {
		t.Errorf("cache bytes %v: no part measured them", *m.CacheBytes)
	}
	m = MergeOrigins([]PhaseResult{part(100, 100), {Name: "read-big"}})
	if m.FromStorage != nil || m.StorageBytes != nil || !strings.Contains(m.Unknown, "not measured in every") {
		t.Errorf("merged with a part without origin: %+v: want unknown", m)
	}
	other := part(100, 100)
	other.Origin.Source = "block device vdb (254:16)"
	unknown := PhaseResult{Name: "read-big", Origin: &Origin{ReadBytes: 100, Unknown: "tmpfs"}}
	m = MergeOrigins([]PhaseResult{unknown, part(100, 100), other, part(100, 100)})
	if m.Source != "block device vda (254:0), block device vdb (254:16)" || m.FromStorage != nil || m.Unknown != "tmpfs" {
		t.Errorf("merged hosts of two devices and one unknown: %+v", m)
	}
	if MergeOrigins([]PhaseResult{{Name: "write-big"}, {Name: "write-big"}}) != nil {
		t.Error("phases without origins merge into one")
	}
	merged, err := MergePhases([]PhaseResult{part(100, 100), part(300, 300)})
	if err != nil || merged.Origin == nil || *merged.Origin.StorageBytes != 400 {
		t.Errorf("MergePhases: %v, origin %+v: want the origins added up", err, merged.Origin)
	}
}

// TestMergeConcurrentOrigins: ranks of one machine read the same device
// counter at the same time, so each saw the whole machine's reads; two
// ranks, one served by the storage and one by the page cache, are 50% from
// storage, not 100% (what adding them up would say). Machines apart add up.
func TestMergeConcurrentOrigins(t *testing.T) {
	part := func(machine string, read, storage, page int64) PhaseResult {
		o := &Origin{Source: "block device vda (254:0)", ReadBytes: read, StorageBytes: i64(storage), PageCacheBytes: i64(page), Machine: machine}
		o.SetFromStorage()
		return PhaseResult{Name: "ior-easy-read", Origin: o}
	}
	m := MergeConcurrentOrigins([]PhaseResult{part("a", 100, 100, 0), part("a", 100, 100, 100)})
	if m == nil || m.ReadBytes != 200 || *m.StorageBytes != 100 || *m.FromStorage != 50 || *m.PageCacheBytes != 100 {
		t.Fatalf("two ranks of one machine merged to %+v: want 100 of 200 bytes from storage, 100 in the page cache", m)
	}
	if sum := MergeOrigins([]PhaseResult{part("a", 100, 100, 0), part("a", 100, 100, 100)}); *sum.FromStorage != 100 {
		t.Errorf("runs one after another: %v%%, want their counters added up (100%%)", *sum.FromStorage)
	}
	m = MergeConcurrentOrigins([]PhaseResult{part("a", 100, 100, 0), part("b", 100, 0, 100), part("a", 100, 90, 0), part("", 100, 100, 0)})
	if m.ReadBytes != 400 || *m.StorageBytes != 200 || *m.PageCacheBytes != 100 {
		t.Errorf("machines a (twice), b and one unnamed merged to %+v: want 200 of 400 bytes from storage", m)
	}
	// Own counts: two ranks of process 7 saw its 100 bytes; process 8 on the
	// same machine fetched 60 of its own; the device grew by 160 for both.
	own := func(pid int, storage int64) PhaseResult {
		p := part("a", 100, storage, 0)
		p.Origin.Own, p.Origin.PID, p.Origin.DeviceBytes = true, pid, i64(160)
		return p
	}
	m = MergeConcurrentOrigins([]PhaseResult{own(7, 100), own(7, 100), own(8, 60)})
	if m.ReadBytes != 300 || *m.StorageBytes != 160 || *m.DeviceBytes != 160 || !m.Own {
		t.Errorf("own counts of two processes on one machine merged to %+v: want 160 bytes from storage, the device's 160 once", m)
	}
	// Three agents' own counts hold their program's pages read back from
	// another disk after the caches were dropped: together 210 bytes, more
	// than the 160 the device counted; they read no more than that from it.
	m = MergeConcurrentOrigins([]PhaseResult{own(7, 70), own(8, 70), own(9, 70)})
	if *m.StorageBytes != 160 || *m.DeviceBytes != 160 {
		t.Errorf("own counts beyond the device's merged to %+v: want the device's 160 bytes", m)
	}
	m = MergeConcurrentOrigins([]PhaseResult{part("a", 100, 100, 0), {Name: "ior-easy-read"}})
	if m.FromStorage != nil || !strings.Contains(m.Unknown, "not measured in every") {
		t.Errorf("merged with a part without origin: %+v: want unknown", m)
	}
}
