package guard

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"path/filepath"
	"testing"
	"time"
)

// Tests of the records of a Service's own creations (Service.own) and of
// the bound of a creating PUT's catch-up (Creation.First), from
// adversarial reviews of that protocol: each failed on the code its
// comment describes.

// failingAfter delivers every entry, then fails, as a read whose
// connection drops or whose context expires after some rows arrived.
type failingAfter struct{ LogReader }

func (r failingAfter) Changes(ctx context.Context, after, before int64, fn func(Change) error) error {
	if err := r.LogReader.Changes(ctx, after, before, fn); err != nil {
		return err
	}
	return errors.New("injected: connection lost after the rows")
}

// TestOwnKeptOnPartialRead: a read of the log that fails after delivering
// its rows leaves the position where it was, and must leave own as it was:
// when catchUpLocked dropped a seq from own inside the callback, the next
// read applied the PUT's entry as a foreign one, a second copy of the key
// (copies = N + 1).
func TestOwnKeptOnPartialRead(t *testing.T) {
	ctx := context.Background()
	st := newSQLite(t, 0)
	s := newService(t, Config{Store: st, PollInterval: time.Hour})
	if code, body, _ := do(s.Handler(), "PUT", "a", "x"); code != 201 {
		t.Fatalf("PUT a: %d %q", code, body)
	}
	c, err := st.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.applyMu.Lock()
	err = s.catchUpLocked(ctx, failingAfter{c}, math.MaxInt64)
	s.applyMu.Unlock()
	c.Release()
	if err == nil {
		t.Fatal("the failing read reported no error")
	}
	if err := s.catchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if n := s.filter().Count([]byte("a")); n != 1 {
		t.Errorf("copies of a after the retried read: %d; want 1 (one row)", n)
	}
	if code, _, _ := do(s.Handler(), "DELETE", "a", ""); code != 204 {
		t.Fatalf("DELETE a: %d", code)
	}
	if n := s.filter().Count([]byte("a")); n != 0 {
		t.Errorf("copies of a after DELETE: %d; want 0", n)
	}
}

// TestSQLiteOwnTxEntriesNotApplied: a user's trigger writes an entry in the
// PUT's transaction below the PUT's own. When created's catch-up read it
// through the transaction (uncommitted) and moved the applied position to
// it, and the PUT then failed before commit, the rollback took back the
// entry and AUTOINCREMENT's counter: the next writer's entry got that same
// seq, which the follower (seq > applied) never read. The catch-up stops
// below the transaction's first entry now.
func TestSQLiteOwnTxEntriesNotApplied(t *testing.T) {
	st, db := sqliteWithAliasTrigger(t)
	s := newService(t, Config{Store: st, PollInterval: 50 * time.Millisecond})
	h := s.Handler()
	if code, body, _ := do(h, "PUT", "a", "x"); code != 201 {
		t.Fatalf("PUT a: %d %q", code, body)
	}
	failPutsOf(t, "doomed")
	if code, _, _ := do(h, "PUT", "doomed", "x"); code != 503 {
		t.Fatalf("failing PUT: %d; want 503", code)
	}
	t.Logf("applied after the failed PUT: %d", s.applied.Load())
	var maxSeq int64
	db.QueryRow(`SELECT max(seq) FROM cacheguard_changes`).Scan(&maxSeq)
	t.Logf("log max seq (committed): %d", maxSeq)
	// Another client creates a row.
	if _, err := db.Exec(`INSERT INTO cacheguard_items (k, v) VALUES ('fresh:alias', x'00')`); err != nil {
		t.Fatal(err)
	}
	db.QueryRow(`SELECT max(seq) FROM cacheguard_changes`).Scan(&maxSeq)
	t.Logf("log max seq after the direct insert: %d", maxSeq)
	time.Sleep(500 * time.Millisecond) // ten poll intervals
	if code, _, src := do(h, "GET", "fresh:alias", ""); code != 200 {
		t.Errorf("GET fresh:alias (row present, committed 500ms ago): %d from %q; want 200", code, src)
	}
}

// delayedFail is the SQLite store, with the PUT of "doomed" failing before
// commit and its handler descheduled between Put's return (the rollback,
// which also rolls back AUTOINCREMENT's counter) and its cleanup of own:
// meanwhile another PUT runs to completion, as on a loaded machine.
type delayedFail struct {
	*SQLite
	meanwhile func()
}

func (d *delayedFail) Put(ctx context.Context, key string, val []byte, origin string, created func(Creation) error) (bool, Outcome, error) {
	isNew, out, err := d.SQLite.Put(ctx, key, val, origin, created)
	if key == "doomed" && err != nil {
		d.meanwhile()
	}
	return isNew, out, err
}

// TestSQLiteReusedSeqKeepsOthersOwn: a failed PUT's seq is reused by the
// next creation (SQLite's AUTOINCREMENT rolls back with the transaction);
// the failed PUT's cleanup of own must leave the other PUT's record, or
// the follower applies that PUT's entry as a foreign one: a second copy
// (copies = N + 1), which outlives a DELETE. (It removed it before own
// held a token per PUT.)
func TestSQLiteReusedSeqKeepsOthersOwn(t *testing.T) {
	st := newSQLite(t, 0)
	d := &delayedFail{SQLite: st}
	s := newService(t, Config{Store: d, PollInterval: 20 * time.Millisecond})
	h := s.Handler()
	d.meanwhile = func() {
		if code, body, _ := do(h, "PUT", "b", "x"); code != 201 {
			t.Errorf("PUT b: %d %q", code, body)
		}
	}
	failPutsOf(t, "doomed")
	if code, _, _ := do(h, "PUT", "doomed", "x"); code != 503 {
		t.Fatalf("PUT doomed: %d; want 503", code)
	}
	time.Sleep(200 * time.Millisecond)
	if n := s.filter().Count([]byte("b")); n != 1 {
		t.Errorf("copies of b (one row): %d; want 1", n)
	}
	if code, _, _ := do(h, "DELETE", "b", ""); code != 204 {
		t.Fatalf("DELETE b: %d", code)
	}
	if n := s.filter().Count([]byte("b")); n != 0 {
		t.Errorf("copies of b after DELETE: %d; want 0", n)
	}
}

// failPutsOf makes SQLite's Put of key fail after created, before the
// commit, until the test ends.
func failPutsOf(t *testing.T, key string) {
	failBeforeCommit = func(k string) error {
		if k == key {
			return errors.New("injected failure before commit")
		}
		return nil
	}
	t.Cleanup(func() { failBeforeCommit = nil })
}

// TestSQLiteTriggerRowOfOwnPutAtOnce: a user's trigger writes a second row
// in the creating PUT's transaction. The PUT's catch-up inside the
// transaction stops below the transaction's first entry, so that row's
// entry is applied after the commit, before the 201: the README promises
// rows created through this instance at once (its window is for other
// writers). Without that second catch-up the filter rejected the row for up
// to a poll interval after the 201.
func TestSQLiteTriggerRowOfOwnPutAtOnce(t *testing.T) {
	ctx := context.Background()
	st, _ := sqliteWithAliasTrigger(t)
	s := newService(t, Config{Store: st, PollInterval: time.Second})
	h := s.Handler()
	if code, body, _ := do(h, "PUT", "a", "x"); code != 201 {
		t.Fatalf("PUT a: %d %q", code, body)
	}
	if _, ok, _ := st.Get(ctx, "a:alias"); !ok {
		t.Fatal("a:alias not in the database")
	}
	if code, _, src := do(h, "GET", "a:alias", ""); code != 200 {
		t.Errorf("GET a:alias right after the PUT that committed it: %d from %q; want 200", code, src)
	}
}

// sqliteWithAliasTrigger opens a guarded SQLite table with a user's trigger
// that writes an alias row, k:alias, for every row inserted, and returns
// the store and a connection of its own to the file. The trigger is created
// after cacheguard's, and SQLite fires the newest first, so the alias
// row's entry comes before the inserted row's.
func sqliteWithAliasTrigger(t *testing.T) (*SQLite, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.db")
	st, err := OpenSQLite(context.Background(), path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TRIGGER user_alias AFTER INSERT ON cacheguard_items WHEN NEW.k NOT LIKE '%:alias'
		BEGIN INSERT INTO cacheguard_items (k, v) VALUES (NEW.k || ':alias', NEW.v); END`); err != nil {
		t.Fatal(err)
	}
	return st, db
}
