package launch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/sysio"
)

// poll is how often the rendezvous directory is looked at.
const poll = 100 * time.Millisecond

// Member is what a rank writes into the rendezvous: where its agent
// listens, and the agent's id, by which rank 0 knows it reached that
// agent and no other. A rank that cannot take part says why in Error.
type Member struct {
	Rank  int      `json:"rank"`
	Addrs []string `json:"addrs,omitempty"`
	ID    string   `json:"id,omitempty"`
	Host  string   `json:"host,omitempty"`
	Size  int      `json:"size,omitempty"`  // its world size, when not rank 0's
	Error string   `json:"error,omitempty"` // why it cannot take part
}

// Notice is what rank 0 publishes in the rendezvous: the run's token,
// the world size it was given (and where from), and the addresses of its
// host, from which every other rank finds the address to listen on.
type Notice struct {
	Token string   `json:"token"`
	Size  int      `json:"size"`
	From  string   `json:"from"`
	Host  string   `json:"host,omitempty"`
	Addrs []string `json:"addrs,omitempty"`
}

// Dir is the rendezvous directory of a run under dir.
func Dir(dir, runID string) string { return filepath.Join(dir, ".fsbench-rendezvous-"+runID) }

// Rendezvous is the directory where the ranks of one run meet. Rank 0
// makes it (mode 0700) and publishes its Notice in it (file "token",
// mode 0600); while it waits for the others it counts in file "beat", so
// that they tell its live rendezvous from one a killed run left behind.
// Every other rank takes the directory and the token only when they are
// its own user's with those modes, waits for a beat, checks the world
// size and writes its Member file; rank 0 reads them all, or waits until
// its timeout, and removes the directory.
type Rendezvous struct {
	Path string
	Rank int
	Size int
	From string // where Size comes from, for errors
	// Deadline, when set, is when this rank's part in the rendezvous
	// ends: a wait ends by then, and a step on the storage outside the
	// waits (making the rendezvous, writing a rank's file, removing it)
	// still running grace past it is left behind, so that the rank's
	// timeout holds when the storage stops answering.
	Deadline time.Time

	mu   sync.Mutex // over dir: a look left behind by wait may still use it
	dir  *os.File   // the directory, once opened and checked
	beat uint64
}

// dirFd is the directory's descriptor, -1 once closed.
func (r *Rendezvous) dirFd() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dir == nil {
		return -1
	}
	return int(r.dir.Fd())
}

const (
	tokenName = "token"
	beatName  = "beat"
)

func memberName(i int) string { return "rank-" + strconv.Itoa(i) + ".json" }

// removeHint is the end of every error about a directory left behind.
func (r *Rendezvous) removeHint() string {
	return "once no run uses it, remove it: rm -rf " + r.Path
}

// Open makes the rendezvous as rank 0 and publishes n, with a token made
// here, which it returns. An existing directory is refused: a run with
// the same id is under way, or one was killed before it could remove it.
func (r *Rendezvous) Open(n Notice) (string, error) {
	var tok string
	err := r.step("making it", func() error {
		var err error
		tok, err = r.open0(n)
		return err
	})
	return tok, err
}

// open0 is Open, unbounded.
func (r *Rendezvous) open0(n Notice) (string, error) {
	if err := unix.Mkdir(r.Path, 0o700); err != nil {
		if errors.Is(err, unix.EEXIST) {
			return "", fmt.Errorf("rendezvous %s is already there: a run with the same id is under way, or one was killed before it removed it; %s", r.Path, r.removeHint())
		}
		return "", &os.PathError{Op: "rendezvous: mkdir", Path: r.Path, Err: err}
	}
	err := r.open(true)
	if err == nil {
		var b [32]byte
		_, _ = rand.Read(b[:])
		n.Token, n.Size, n.From = hex.EncodeToString(b[:]), r.Size, r.From
		data, _ := json.Marshal(n)
		if err = r.writeAt(beatName, r.beatText()); err == nil {
			err = r.writeAt(tokenName, data)
		}
	}
	if err != nil {
		_ = r.Remove()
		return "", err
	}
	return n.Token, nil
}

// open opens the directory without following a symbolic link and checks
// on the handle that it is this user's, mode 0700 (made so first when
// mine, as Mkdir's mode is cut by the umask).
func (r *Rendezvous) open(mine bool) error {
	fd, err := unix.Open(r.Path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), r.Path)
	if mine {
		_ = unix.Fchmod(fd, 0o700)
	}
	if err := r.owned(fd, r.Path, unix.S_IFDIR, 0o700); err != nil {
		f.Close()
		return err
	}
	r.mu.Lock()
	r.dir = f
	r.mu.Unlock()
	return nil
}

// ErrNotOurs is in the error about a rendezvous or a token that is not
// this user's with the modes rank 0 gives them.
var ErrNotOurs = errors.New("another user's, or not made by rank 0")

// owned checks on fd that it is of type kind, this process's user's, with
// mode perm exactly.
func (r *Rendezvous) owned(fd int, path string, kind, perm uint32) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &os.PathError{Op: "rendezvous: fstat", Path: path, Err: err}
	}
	uid := uint32(os.Geteuid())
	if st.Mode&unix.S_IFMT == kind && st.Uid == uid && st.Mode&0o7777 == perm {
		return nil
	}
	return fmt.Errorf("rendezvous %s: owner uid %d, mode %04o, where this run's rank 0 makes it uid %d, mode %04o: %w; refused; %s",
		path, st.Uid, st.Mode&0o7777, uid, perm, ErrNotOurs, r.removeHint())
}

// openAt opens name in the rendezvous for reading, without following a
// symbolic link, and checks it is this user's regular file, mode 0600.
func (r *Rendezvous) openAt(name string) (*os.File, error) {
	fd, err := unix.Openat(r.dirFd(), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(r.Path, name)
	if err := r.owned(fd, path, unix.S_IFREG, 0o600); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

// readAt reads name in the rendezvous whole, at most 64 KiB of it.
func (r *Rendezvous) readAt(name string) ([]byte, error) {
	f, err := r.openAt(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 64<<10))
}

// writeAt writes name in the rendezvous whole, mode 0600: into a
// temporary name first, so that a rank polling for it never reads half
// of it. It is not synced: the rendezvous lives as long as the run, and
// a sync can wait minutes on a busy disk.
func (r *Rendezvous) writeAt(name string, data []byte) error {
	dfd := r.dirFd()
	tmp := name + ".tmp"
	_ = unix.Unlinkat(dfd, tmp, 0)
	fd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err == nil {
		f := os.NewFile(uintptr(fd), tmp)
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = unix.Renameat(dfd, tmp, dfd, name)
		}
	}
	if err != nil {
		_ = unix.Unlinkat(dfd, tmp, 0)
		if errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("rendezvous %s is gone: rank 0 removed it, as it does once the ranks of its world size joined: is the world size %d given to every rank?", r.Path, r.Size)
		}
		return fmt.Errorf("rendezvous: write %s: %w", filepath.Join(r.Path, name), err)
	}
	return nil
}

func (r *Rendezvous) beatText() []byte { return []byte(strconv.FormatUint(r.beat, 10)) }

// wait calls try every poll until it reports done or fails, ctx ends or
// timeout passes (then it returns late()). The deadline holds even when
// a look at the file system blocks (a server gone, a disk minutes behind):
// a try still running a poll past it is left behind, so try and late
// share state only under a lock that is never held over I/O.
func wait(ctx context.Context, timeout time.Duration, try func() (bool, error), late func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := look(ctx, try, time.Until(deadline)+poll)
		if ctx.Err() != nil && !errors.Is(err, errDone) && (err == nil || errors.Is(err, errBlocked)) {
			// One last look, so that what arrived since the last poll
			// (a rank that joined) is known to the caller too.
			err = look(context.Background(), try, poll)
			if err == nil || errors.Is(err, errBlocked) {
				return fmt.Errorf("interrupted while waiting: %w", ctx.Err())
			}
		}
		switch {
		case errors.Is(err, errDone):
			return nil
		case err != nil && !errors.Is(err, errBlocked):
			return err
		case time.Now().After(deadline):
			return late()
		}
		select {
		case <-ctx.Done():
		case <-time.After(poll):
		}
	}
}

var (
	errDone    = errors.New("done")
	errBlocked = errors.New("a look at the rendezvous did not return")
)

// look runs try, for limit at most, and less when ctx ends (then for one
// poll more): errDone when try is done, errBlocked when it did not return.
func look(ctx context.Context, try func() (bool, error), limit time.Duration) error {
	res := make(chan error, 1)
	go func() {
		done, err := try()
		if done && err == nil {
			err = errDone
		}
		res <- err
	}()
	t := time.NewTimer(max(limit, 0))
	defer t.Stop()
	select {
	case err := <-res:
		return err
	case <-t.C:
		return errBlocked
	case <-ctx.Done():
	}
	select {
	case err := <-res:
		return err
	case <-time.After(poll):
		return errBlocked
	}
}

// Members waits, as rank 0, until every other rank has joined, for
// timeout at most and not past the Deadline; the error then names the ranks missing, and the
// members returned are those that joined (Addrs nil for the others). A
// rank that says it cannot take part, or one beyond the world size, ends
// the wait with an error saying so.
func (r *Rendezvous) Members(ctx context.Context, timeout time.Duration) ([]Member, error) {
	end := r.until(timeout)
	var mu sync.Mutex // over members and joined: see wait
	members := make([]Member, r.Size)
	joined := make([]bool, r.Size)
	joined[0] = true
	isJoined := func(i int) bool {
		mu.Lock()
		defer mu.Unlock()
		return joined[i]
	}
	err := wait(ctx, time.Until(end), func() (bool, error) {
		r.beat++
		if err := r.writeAt(beatName, r.beatText()); err != nil {
			return false, err
		}
		if err := r.extraRanks(); err != nil {
			return false, err
		}
		all := true
		for i := 1; i < r.Size; i++ {
			if isJoined(i) {
				continue
			}
			m, ok, err := r.member(i)
			if err != nil {
				return false, err
			}
			if !ok {
				all = false
				continue
			}
			mu.Lock()
			members[i], joined[i] = m, true
			mu.Unlock()
		}
		return all, nil
	}, func() error {
		mu.Lock()
		defer mu.Unlock()
		return r.notJoined(joined, timeout)
	})
	var mm *mismatch
	if errors.As(err, &mm) {
		r.awaitOtherSize(ctx, end, mm.size)
		err = errors.New(mm.msg)
	}
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(members), err
}

// member reads what rank i wrote on joining; ok is false while it has not.
func (r *Rendezvous) member(i int) (m Member, ok bool, err error) {
	b, err := r.readAt(memberName(i))
	switch {
	case errors.Is(err, unix.ENOENT):
		return m, false, nil
	case err != nil:
		return m, false, err
	}
	if err := json.Unmarshal(b, &m); err != nil || m.Rank != i {
		return m, false, fmt.Errorf("rendezvous: %s is not what rank %d writes", filepath.Join(r.Path, memberName(i)), i)
	}
	if m.Error != "" {
		return m, false, &mismatch{rank: i, size: m.Size, msg: m.Error}
	}
	if len(m.Addrs) == 0 {
		return m, false, fmt.Errorf("rendezvous: rank %d gives no address in %s", i, filepath.Join(r.Path, memberName(i)))
	}
	return m, true, nil
}

// notJoined is the error of a wait that ended before every rank joined.
func (r *Rendezvous) notJoined(joined []bool, timeout time.Duration) error {
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
}

// awaitOtherSize waits, until end, for the ranks of a world of size
// ranks (another rank's, not rank 0's) still to look at the token, so
// that each says what is wrong too.
func (r *Rendezvous) awaitOtherSize(ctx context.Context, end time.Time, size int) {
	_ = wait(ctx, time.Until(end), func() (bool, error) {
		r.beat++
		_ = r.writeAt(beatName, r.beatText())
		for i := 1; i < size; i++ {
			if err := unix.Fstatat(r.dirFd(), memberName(i), new(unix.Stat_t), unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return false, nil
			}
		}
		return true, nil
	}, func() error { return nil })
}

// mismatch is a rank's report that its world size is not rank 0's.
type mismatch struct {
	rank, size int
	msg        string
}

func (m *mismatch) Error() string { return m.msg }

// extraRanks fails when a rank at or beyond rank 0's world size joined:
// the ranks were not all given the same world size.
func (r *Rendezvous) extraRanks() error {
	fd, err := unix.Openat(r.dirFd(), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("rendezvous: open %s: %w", r.Path, err)
	}
	d := os.NewFile(uintptr(fd), r.Path)
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return fmt.Errorf("rendezvous: %w", err)
	}
	for _, n := range names {
		var i int
		if _, err := fmt.Sscanf(n, "rank-%d.json", &i); err == nil && i >= r.Size && !strings.HasSuffix(n, ".tmp") {
			b, _ := r.readAt(n)
			var m Member
			if json.Unmarshal(b, &m) == nil && m.Error != "" {
				return &mismatch{rank: i, size: m.Size, msg: m.Error}
			}
			return &mismatch{rank: i, size: i + 1, msg: fmt.Sprintf("world size mismatch: rank %d joined, but rank 0 has %d ranks (%s): give every rank the same world size", i, r.Size, r.From)}
		}
	}
	return nil
}

// Join waits, as a rank other than 0, for rank 0 to open the rendezvous,
// for timeout at most and not past the Deadline, and returns its Notice. The directory and the
// token must be this user's, modes 0700 and 0600; a directory where no
// rank 0 counts its beat within timeout is one a killed run left behind;
// a world size other than this rank's fails here and on rank 0.
func (r *Rendezvous) Join(ctx context.Context, timeout time.Duration) (Notice, error) {
	var mu sync.Mutex // over n and tokenSeen: see wait
	var n Notice
	var tokenSeen bool
	var first []byte // the first beat seen
	err := wait(ctx, time.Until(r.until(timeout)), func() (bool, error) {
		if r.dirFd() < 0 {
			if err := r.open(false); errors.Is(err, unix.ENOENT) {
				return false, nil
			} else if err != nil {
				return false, r.refused(err)
			}
		}
		b, err := r.readAt(tokenName)
		if errors.Is(err, unix.ENOENT) {
			return false, nil
		}
		if err != nil {
			return false, r.refused(err)
		}
		var got Notice
		if err := json.Unmarshal(b, &got); err != nil || got.Token == "" {
			return false, fmt.Errorf("rendezvous: %s is not what rank 0 writes", filepath.Join(r.Path, tokenName))
		}
		mu.Lock()
		n, tokenSeen = got, true
		mu.Unlock()
		if got.Size != r.Size {
			return false, errSize
		}
		beat, err := r.readAt(beatName)
		if err != nil && !errors.Is(err, unix.ENOENT) {
			return false, r.refused(err)
		}
		if first == nil {
			first = append([]byte{}, beat...)
			return false, nil
		}
		return string(beat) != string(first), nil
	}, func() error {
		mu.Lock()
		defer mu.Unlock()
		if tokenSeen {
			return fmt.Errorf("rendezvous %s is stale: no rank 0 counts in it (it did not change within %v), so a run killed before it removed it left it behind; %s", r.Path, timeout, r.removeHint())
		}
		return fmt.Errorf("rank 0 of %d did not open the rendezvous %s within %v", r.Size, r.Path, timeout)
	})
	mu.Lock()
	defer mu.Unlock()
	if errors.Is(err, errSize) {
		err := fmt.Errorf("world size mismatch: rank 0 has %d ranks (%s), rank %d has %d (%s): give every rank the same world size", n.Size, n.From, r.Rank, r.Size, r.From)
		_ = r.Register(Member{Rank: r.Rank, Size: r.Size, Error: err.Error()})
		return Notice{}, err
	}
	if err != nil {
		return Notice{}, err
	}
	return n, nil
}

var errSize = errors.New("world size mismatch")

// refused gives the error for a rendezvous that is not taken.
func (r *Rendezvous) refused(err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		return fmt.Errorf("rendezvous %s (or its token) is a symbolic link or not a directory, so not made by this run's rank 0; refused; %s", r.Path, r.removeHint())
	}
	var pe *os.PathError
	if errors.As(err, &pe) || errors.Is(err, ErrNotOurs) {
		return err
	}
	return fmt.Errorf("rendezvous %s: %w", r.Path, err)
}

// Register writes this rank's Member file.
func (r *Rendezvous) Register(m Member) error {
	b, _ := json.Marshal(m)
	return r.step("writing rank "+strconv.Itoa(r.Rank)+"'s file", func() error { return r.writeAt(memberName(r.Rank), b) })
}

// Close lets go of the directory, as a rank other than 0 once it joined.
func (r *Rendezvous) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dir != nil {
		r.dir.Close()
		r.dir = nil
	}
}

// Remove removes the rendezvous, as rank 0 once it has waited for the
// other ranks: they need it no more (rank 0 tells each the run's end
// itself), and the token is on storage no longer than that.
func (r *Rendezvous) Remove() error {
	return r.step("removing it", func() error {
		r.Close()
		if err := os.RemoveAll(r.Path); err != nil {
			return fmt.Errorf("rendezvous: remove: %w", err)
		}
		return nil
	})
}

// grace is how long past the Deadline a step on the storage may still
// take: the removal of the rendezvous comes after it.
const grace = 5 * time.Second

// ErrStalled is in the error of a step on the rendezvous that was left
// behind: the storage did not answer in time.
var ErrStalled = sysio.ErrStalled

// step runs f, until grace past the Deadline at most when one is set: f
// still running then is left behind (it shares state only under locks
// never held over I/O), and the error says what did not end.
func (r *Rendezvous) step(what string, f func() error) error {
	if r.Deadline.IsZero() {
		return f()
	}
	limit := max(time.Until(r.Deadline), 0) + grace
	err := look(context.Background(), func() (bool, error) { return true, f() }, limit)
	switch {
	case errors.Is(err, errDone):
		return nil
	case errors.Is(err, errBlocked):
		return fmt.Errorf("rendezvous %s: %s did not end within %v: %w; %s", r.Path, what, limit.Round(time.Second), ErrStalled, r.removeHint())
	}
	return err
}

// until is when a wait of timeout from now ends: by the Deadline too.
func (r *Rendezvous) until(timeout time.Duration) time.Time {
	end := time.Now().Add(timeout)
	if !r.Deadline.IsZero() && r.Deadline.Before(end) {
		return r.Deadline
	}
	return end
}
