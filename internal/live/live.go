// Package live publishes the counters of a running fsbench benchmark so
// that `fsbench stats` can show them, and reads them back.
//
// A running benchmark writes a small JSON snapshot (its pid, its target,
// the phase in progress and cumulative counters) a few times a second to
// <Dir()>/<pid>.json, replacing it atomically by a rename, and removes it
// when the run ends. A reader lists the snapshots, ignoring those of
// processes that are gone and those not refreshed for StaleAfter (a run
// killed with SIGKILL leaves its file behind).
//
// It carries counters only, never a result: what a run measures reaches its
// user through package report, not through these snapshots.
package live

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Version is the version of the snapshot format.
const Version = 1

// Snapshot is what a running benchmark publishes. The counters are
// cumulative over the whole run: they never go backwards while the run
// lives, even though the engine counts each phase from zero.
type Snapshot struct {
	Version    int       `json:"v"`
	PID        int       `json:"pid"`
	Command    string    `json:"command"`         // "bench", ...
	Target     string    `json:"target"`          // the directory benchmarked, absolute
	Mount      string    `json:"mount,omitempty"` // the mount point holding Target
	Phase      string    `json:"phase"`           // the phase in progress, "" between phases
	Kind       string    `json:"kind"`            // write, read, stat, unlink, ...
	Started    time.Time `json:"started"`
	Time       time.Time `json:"time"`
	Ops        int64     `json:"ops"`
	ReadBytes  int64     `json:"read_bytes"`
	WriteBytes int64     `json:"write_bytes"`
	Errors     int64     `json:"errors"`
	LatencyNs  int64     `json:"latency_ns"` // sum of the latencies of Ops
}

// StaleAfter is how old a snapshot may be before readers ignore it.
const StaleAfter = 10 * time.Second

// DirEnv names an environment variable that overrides Dir (for tests and
// for running several isolated benchmarks).
const DirEnv = "FSBENCH_LIVE_DIR"

// Dirs are the directories where snapshots may be, in order of preference:
// $FSBENCH_LIVE_DIR alone when set; otherwise /run/fsbench,
// $XDG_RUNTIME_DIR/fsbench, and <os.TempDir()>/fsbench-live.
func Dirs() []string {
	if d := os.Getenv(DirEnv); d != "" {
		return []string{d}
	}
	dirs := []string{"/run/fsbench"}
	if x := os.Getenv("XDG_RUNTIME_DIR"); x != "" {
		dirs = append(dirs, filepath.Join(x, "fsbench"))
	}
	return append(dirs, filepath.Join(os.TempDir(), "fsbench-live"))
}

// Marshal encodes a snapshot.
func Marshal(s *Snapshot) ([]byte, error) { return json.Marshal(s) }

// Parse decodes a snapshot and checks it makes sense.
func Parse(data []byte) (*Snapshot, error) {
	var s Snapshot
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("live snapshot: %w", err)
	}
	switch {
	case s.Version != Version:
		return nil, fmt.Errorf("live snapshot: version %d, want %d", s.Version, Version)
	case s.PID <= 0:
		return nil, fmt.Errorf("live snapshot: bad pid %d", s.PID)
	case s.Ops < 0 || s.ReadBytes < 0 || s.WriteBytes < 0 || s.Errors < 0 || s.LatencyNs < 0:
		return nil, errors.New("live snapshot: negative counter")
	}
	return &s, nil
}

// Alive reports whether a process exists; it is a variable for tests.
var Alive = processAlive

// List returns the snapshots of the runs alive now, from every directory
// of Dirs. Unreadable or malformed files are skipped: they belong to
// another user or are being replaced.
func List(now time.Time) []*Snapshot {
	var out []*Snapshot
	seen := map[int]bool{}
	for _, dir := range Dirs() {
		for _, s := range ListDir(dir, now) {
			if !seen[s.PID] {
				seen[s.PID] = true
				out = append(out, s)
			}
		}
	}
	return out
}

// ListDir returns the live snapshots of one directory.
func ListDir(dir string, now time.Time) []*Snapshot {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []*Snapshot
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSuffix(name, ".json"))
		if err != nil || pid <= 0 || !Alive(pid) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		s, err := Parse(data)
		if err != nil || s.PID != pid || now.Sub(s.Time) > StaleAfter {
			continue
		}
		out = append(out, s)
	}
	return out
}

// Within reports whether path is dir or below it.
func Within(path, dir string) bool {
	if dir == "" || path == "" {
		return false
	}
	if dir == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}
