package objbench

import (
	"errors"
	"fmt"
	"time"
)

// Journal records the puts and deletes of a workload that the store
// acknowledged, for fsbench verify to read back after a failure (the CLI
// gives a journal.Writer). The store itself is not wrapped (the run finds
// what it can do by type assertions): the workloads tell the journal as
// each put or delete returns.
type Journal interface {
	// Put records the object key (the whole key in the store, the run's
	// prefix included) of size bytes, whose content fill writes, put at t.
	Put(worker int, key string, size int64, fill func(b []byte, off int64), t time.Time)
	// Deleted records the delete of key at t; not sure, a delete that
	// failed, which the store may or may not have done.
	Deleted(worker int, key string, t time.Time, sure bool)
}

// maxJournalObject is the largest object a journal records.
const maxJournalObject = 4 << 30

// CheckJournal checks the options of a run with a journal: a workload
// that writes only with single puts, whose objects stay.
func (o *Options) CheckJournal() error {
	switch {
	case o.Workload == "" || o.ListExisting:
		return errors.New("--journal records the puts and deletes of a --workload (put, delete, mixed, get, stat, list)")
	case o.Workload == "multipart" || o.Workload == "versioned":
		return fmt.Errorf("--journal does not record the %s workload's objects; use put, delete, mixed, get, stat or list", o.Workload)
	case !o.Keep:
		return errors.New("--journal needs --keep: fsbench verify reads back the objects the run puts, so they must stay")
	case o.Sizes.Max > maxJournalObject:
		return errors.New("--journal records objects of up to 4 GiB")
	}
	return nil
}

// journalPut records a put of the run's object key that the store
// acknowledged.
func (r *run) journalPut(worker int, key string, size int64) {
	if r.o.Journal == nil {
		return
	}
	id := r.pat.ID(key)
	r.o.Journal.Put(worker, r.prefix+key, size, func(b []byte, off int64) { r.pat.Fill(b, id, off) }, time.Now())
}

// journalDeleted records deletes of the run's objects: acknowledged
// (err nil), or failed, which leaves them neither there nor gone for
// certain (a delete that timed out may have been done).
func (r *run) journalDeleted(worker int, err error, keys ...string) {
	if r.o.Journal == nil {
		return
	}
	t := time.Now()
	for _, k := range keys {
		r.o.Journal.Deleted(worker, r.prefix+k, t, err == nil)
	}
}
