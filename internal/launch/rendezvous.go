package launch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fsbench/fsbench/internal/sysio"
)

// poll is how often the rendezvous directory is looked at.
const poll = 100 * time.Millisecond

// Member is what a rank writes into the rendezvous: where its agent
// listens, under several addresses (its host's, loopback last), and the
// agent's id, by which rank 0 knows it reached that agent and no other.
type Member struct {
	Rank  int      `json:"rank"`
	Addrs []string `json:"addrs"`
	ID    string   `json:"id"`
	Host  string   `json:"host,omitempty"`
}

// Dir is the rendezvous directory of a run under dir.
func Dir(dir, runID string) string { return filepath.Join(dir, ".fsbench-rendezvous-"+runID) }

// Rendezvous is the directory where the ranks of one run meet: rank 0
// makes it (mode 0700) with the run's token in it (mode 0600); every
// other rank reads the token and writes its Member file; rank 0 reads
// them all, or waits until its timeout, and removes the directory.
type Rendezvous struct {
	Path string
	Rank int
	Size int
}

func (r *Rendezvous) token() string { return filepath.Join(r.Path, "token") }
func (r *Rendezvous) member(i int) string {
	return filepath.Join(r.Path, "rank-"+strconv.Itoa(i)+".json")
}

// Open makes the rendezvous as rank 0 and returns the run's token, made
// here. An existing directory is refused: a run with the same id is under
// way, or one was killed before it could remove its directory.
func (r *Rendezvous) Open() (string, error) {
	if err := os.Mkdir(r.Path, 0o700); err != nil {
		if errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("rendezvous %s exists: a run with the same id is under way, or one was killed before it removed it (remove it if no run uses it)", r.Path)
		}
		return "", fmt.Errorf("rendezvous: %w", err)
	}
	var b [32]byte
	_, _ = rand.Read(b[:])
	tok := hex.EncodeToString(b[:])
	if err := writeFile(r.token(), []byte(tok)); err != nil {
		_ = os.RemoveAll(r.Path)
		return "", err
	}
	return tok, nil
}

// writeFile writes path whole, mode 0600: into a temporary name first,
// so that a rank polling for it never reads half of it.
func writeFile(path string, data []byte) error {
	if err := sysio.WriteFileAtomic(path, "", data, 0o600); err != nil {
		return fmt.Errorf("rendezvous: %w", err)
	}
	return nil
}

// wait calls try every poll until it reports done or fails, ctx ends or
// timeout passes (then it returns late()).
func wait(ctx context.Context, timeout time.Duration, try func() (bool, error), late func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		done, err := try()
		if done || err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return late()
		}
		select {
		case <-ctx.Done():
			// One last look, so that what arrived since the last poll
			// (a rank that joined) is known to the caller too.
			if done, err := try(); done || err != nil {
				return err
			}
			return fmt.Errorf("interrupted while waiting: %w", ctx.Err())
		case <-time.After(poll):
		}
	}
}

// Members waits, as rank 0, until every other rank has joined, for
// timeout at most; the error then names the ranks missing, and the
// members returned are those that joined (Addrs nil for the others).
func (r *Rendezvous) Members(ctx context.Context, timeout time.Duration) ([]Member, error) {
	members := make([]Member, r.Size)
	joined := make([]bool, r.Size)
	joined[0] = true
	err := wait(ctx, timeout, func() (bool, error) {
		all := true
		for i := 1; i < r.Size; i++ {
			if joined[i] {
				continue
			}
			b, err := os.ReadFile(r.member(i))
			if err != nil {
				all = false
				continue
			}
			if err := json.Unmarshal(b, &members[i]); err != nil || members[i].Rank != i || len(members[i].Addrs) == 0 {
				return false, fmt.Errorf("rendezvous: %s is not what rank %d writes", r.member(i), i)
			}
			joined[i] = true
		}
		return all, nil
	}, func() error {
		var missing []string
		for i, ok := range joined {
			if !ok {
				missing = append(missing, strconv.Itoa(i))
			}
		}
		word := "ranks"
		if len(missing) == 1 {
			word = "rank"
		}
		return fmt.Errorf("%s %s of %d did not join within %v (rendezvous %s)", word, strings.Join(missing, ", "), r.Size, timeout, r.Path)
	})
	return members, err
}

// Join waits, as a rank other than 0, for rank 0 to open the rendezvous,
// for timeout at most, and returns the run's token.
func (r *Rendezvous) Join(ctx context.Context, timeout time.Duration) (string, error) {
	var tok string
	err := wait(ctx, timeout, func() (bool, error) {
		b, err := os.ReadFile(r.token())
		tok = strings.TrimSpace(string(b))
		return err == nil && tok != "", nil
	}, func() error {
		return fmt.Errorf("rank 0 of %d did not open the rendezvous %s within %v", r.Size, r.Path, timeout)
	})
	return tok, err
}

// Register writes this rank's Member file.
func (r *Rendezvous) Register(m Member) error {
	b, _ := json.Marshal(m)
	return writeFile(r.member(r.Rank), b)
}

// Remove removes the rendezvous, as rank 0 once it has waited for the
// other ranks: they need it no more (rank 0 tells each the run's end
// itself), and the token is on storage no longer than that.
func (r *Rendezvous) Remove() error { return os.RemoveAll(r.Path) }
