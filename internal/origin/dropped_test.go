package origin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/stats"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/testenv"
)

// TestNoLookAfterDrop shows why the page cache is not looked at after all
// caches were dropped: opening the files to look reads their metadata back
// from the device (what the phase's timed opens would then find cached),
// and with dropped set Begin reads nothing from it.
func TestNoLookAfterDrop(t *testing.T) {
	dir := testenv.LoopExt4(t, "64M")
	var files []string
	for d := range 10 {
		sub := filepath.Join(dir, fmt.Sprint(d))
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := range 30 {
			name := filepath.Join(sub, fmt.Sprint(f))
			if err := os.WriteFile(name, []byte("data"), 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, name)
		}
	}
	m, err := sysio.FindMount(dir)
	if err != nil {
		t.Fatal(err)
	}
	disk, err := stats.NewDiskSource(sysio.ProcRoot, uint32(m.Major), uint32(m.Minor), false)
	if err != nil {
		t.Fatal(err)
	}
	deviceRead := func() float64 {
		s := stats.NewSample(time.Time{})
		if err := disk.Collect(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		return s.Values["disk.read_bytes"]
	}
	p := New(dir)
	begin := func(dropped bool) (float64, *Reading) {
		if err := sysio.DropCaches(); err != nil {
			t.Fatal(err)
		}
		before := deviceRead()
		r := p.Begin(context.Background(), files, dropped)
		return deviceRead() - before, r
	}
	if n, r := begin(true); n != 0 || r.page != nil || r.pageWhy != NotLooked {
		t.Errorf("after a drop: Begin read %.0f bytes from the device, page cache %v (%q); want nothing read, not looked at", n, r.page, r.pageWhy)
	}
	if n, r := begin(false); n == 0 || r.page == nil {
		t.Errorf("looking at %d files after a drop read %.0f bytes from the device (page cache %v, %q); want their metadata read back", len(files), n, r.page, r.pageWhy)
	}
}
