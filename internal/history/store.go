package history

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/fsbench/fsbench/internal/objstore"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/pkg/object"
)

// ErrBadInput is wrapped by the errors the user fixes by changing the
// command line: a history that cannot be named or opened as given.
var ErrBadInput = errors.New("bad input")

// Store is a history: results kept in a directory or under a bucket
// prefix. Its keys:
//
//	keys/ID.json            the Key of series ID, written with its first run
//	series/ID/NAME.json     an Entry of series ID
//	results/ID/NAME.json    the whole result behind that entry
//
// Every run is its own object, so that jobs adding to one history at once
// never write the same key.
type Store struct {
	s    object.Storage
	Name string // as given to Open, credentials removed
	// Dir is the directory of a history kept in one ("" in an object
	// store).
	Dir string
}

// Open opens the history at where: a directory (created if missing) or
// an object store URL (s3://BUCKET/PREFIX, http(s)://HOST/BUCKET/PREFIX
// for an S3-compatible store, nfs://HOST/EXPORT/PATH), with cfg's
// credentials and limits.
func Open(ctx context.Context, where string, cfg object.Config) (*Store, error) {
	if where == "" {
		return nil, fmt.Errorf("%w: the history names no directory or URL", ErrBadInput)
	}
	driver, err := driverOf(where)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	if driver == "file" {
		if err := os.MkdirAll(strings.TrimPrefix(where, "file://"), 0o755); err != nil {
			return nil, fmt.Errorf("%w: history %s: %v", ErrBadInput, where, err)
		}
	}
	s, err := objstore.Open(ctx, objstore.Timeout(cfg), func(ctx context.Context) (object.Storage, error) {
		return object.Open(ctx, driver, where, cfg)
	})
	if err != nil {
		if errors.Is(err, objstore.ErrBadInput) {
			err = fmt.Errorf("%w: %w", ErrBadInput, err)
		}
		return nil, fmt.Errorf("history %s: %w", object.RedactURL(where), err)
	}
	st := &Store{s: s, Name: object.RedactURL(where)}
	if driver == "file" {
		st.Dir = strings.TrimPrefix(where, "file://")
	}
	return st, nil
}

// CheckWhere checks, before a run, that where ("": none) can name a
// history.
func CheckWhere(where string) error {
	if where == "" {
		return nil
	}
	_, err := driverOf(where)
	return err
}

// driverOf is the driver of the store at where.
func driverOf(where string) (string, error) {
	if !strings.Contains(where, "://") || strings.HasPrefix(where, "file://") {
		return "file", nil
	}
	u, err := url.Parse(where)
	if err != nil {
		return "", fmt.Errorf("history %s: not a URL", object.RedactURL(where))
	}
	switch u.Scheme {
	case "s3", "http", "https":
		return "s3", nil
	case "nfs":
		return "nfs", nil
	}
	return "", fmt.Errorf("history %s: want a directory, or an s3://, http(s):// or nfs:// URL", object.RedactURL(where))
}

// Close releases the store.
func (st *Store) Close() error { return st.s.Close() }

// Added is what Add did with one result.
type Added struct {
	Entry Entry
	// New is set when the result started a series.
	New bool
	// Differs, for a new series, are the series of the same command,
	// target and hosts whose parameters differ, each with its
	// differences: why the result was not added to them.
	Differs map[string][]string
	// Duplicate is set when the store held this run already.
	Duplicate bool
}

// Add keeps res in the history, labelled label.
func (st *Store) Add(ctx context.Context, res *report.Result, label string) (Added, error) {
	e := EntryOf(res, label)
	a := Added{Entry: e}
	keys, err := st.Keys(ctx)
	if err != nil {
		return a, err
	}
	if _, ok := keys[e.Series]; !ok {
		a.New = true
		for id, k := range keys {
			if k.sameKind(e.Key) {
				if a.Differs == nil {
					a.Differs = map[string][]string{}
				}
				a.Differs[id] = k.Diff(e.Key)
			}
		}
		if err := st.putJSON(ctx, "keys/"+e.Series+".json", e.Key); err != nil {
			return a, err
		}
	}
	entryKey := "series/" + e.Series + "/" + e.name()
	if _, err := st.s.Head(ctx, entryKey); err == nil {
		a.Duplicate = true
		return a, nil
	}
	var b bytes.Buffer
	if err := report.WriteJSON(&b, res); err != nil {
		return a, err
	}
	if err := st.put(ctx, e.Result, b.Bytes()); err != nil {
		return a, err
	}
	return a, st.putJSON(ctx, entryKey, e)
}

func (st *Store) putJSON(ctx context.Context, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return st.put(ctx, key, b)
}

func (st *Store) put(ctx context.Context, key string, b []byte) error {
	if err := st.s.Put(ctx, key, bytes.NewReader(b)); err != nil {
		return fmt.Errorf("history %s: put %s: %w", st.Name, key, err)
	}
	return nil
}

func (st *Store) get(ctx context.Context, key string, v any) error {
	rc, err := st.s.Get(ctx, key, 0, -1)
	if err != nil {
		return fmt.Errorf("history %s: get %s: %w", st.Name, key, err)
	}
	b, err := io.ReadAll(rc)
	if cerr := objstore.Close(rc); err == nil {
		err = cerr
	}
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		return fmt.Errorf("history %s: %s: %w", st.Name, key, err)
	}
	return nil
}

// list is every object key under prefix, in order.
func (st *Store) list(ctx context.Context, prefix string) ([]string, error) {
	var out []string
	opt := object.ListOptions{Prefix: prefix}
	for {
		page, err := st.s.List(ctx, opt)
		if err != nil {
			return nil, fmt.Errorf("history %s: list %s: %w", st.Name, prefix, err)
		}
		for _, o := range page.Objects {
			if !o.IsDir && strings.HasSuffix(o.Key, ".json") {
				out = append(out, o.Key)
			}
		}
		if !page.Truncated {
			return out, nil
		}
		opt.StartAfter = page.Next
	}
}

// Keys are the series of the history, by ID.
func (st *Store) Keys(ctx context.Context) (map[string]Key, error) {
	names, err := st.list(ctx, "keys/")
	if err != nil {
		return nil, err
	}
	out := map[string]Key{}
	for _, n := range names {
		var k Key
		if err := st.get(ctx, n, &k); err != nil {
			return nil, err
		}
		out[strings.TrimSuffix(strings.TrimPrefix(n, "keys/"), ".json")] = k
	}
	return out, nil
}

// Load reads every entry of the history into its series, each in the
// order its runs started.
func (st *Store) Load(ctx context.Context) ([]*Series, error) {
	names, err := st.list(ctx, "series/")
	if err != nil {
		return nil, err
	}
	entries := make([]Entry, len(names))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i, n := range names {
		g.Go(func() error { return st.get(gctx, n, &entries[i]) })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return group(entries), nil
}

// group puts entries into their series, each in start order, the series
// in the order of their first runs.
func group(entries []Entry) []*Series {
	by := map[string]*Series{}
	var out []*Series
	for _, e := range entries {
		s := by[e.Series]
		if s == nil {
			s = &Series{ID: e.Series, Key: e.Key}
			by[e.Series] = s
			out = append(out, s)
		}
		s.Entries = append(s.Entries, e)
	}
	for _, s := range out {
		sort.SliceStable(s.Entries, func(i, j int) bool { return s.Entries[i].StartedAt.Before(s.Entries[j].StartedAt) })
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Entries[0].StartedAt.Before(out[j].Entries[0].StartedAt) })
	return out
}

// Series is the runs of one key, oldest first.
type Series struct {
	ID      string
	Key     Key
	Entries []Entry
}

// Find is the series of key k's ID, or nil.
func Find(all []*Series, id string) *Series {
	for _, s := range all {
		if s.ID == id {
			return s
		}
	}
	return nil
}

// Values are the series' values of a figure, with the indices of the
// entries that have it.
func (s *Series) Values(figure string) (values []float64, idx []int) {
	for i, e := range s.Entries {
		if v, ok := e.Value(figure); ok {
			values = append(values, v)
			idx = append(idx, i)
		}
	}
	return values, idx
}

// FigureNames are the figures of the series, in the order of its latest
// run, then any only earlier runs had.
func (s *Series) FigureNames() []string {
	var out []string
	seen := map[string]bool{}
	for i := len(s.Entries) - 1; i >= 0; i-- {
		for _, f := range s.Entries[i].Figures {
			if !seen[f.Name] {
				seen[f.Name] = true
				out = append(out, f.Name)
			}
		}
	}
	return out
}
