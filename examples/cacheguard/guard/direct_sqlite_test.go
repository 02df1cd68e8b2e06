package guard

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed25b00da8/cuckoo"
)

// sqliteDirect opens the file through a database handle of its own, as
// another process (the sqlite3 shell, a batch job) would: no service, no
// filter.
func sqliteDirect(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func sqliteExec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// sqlitePoll is the poll interval of the SQLite tests; the bound for a
// direct write to reach the filter is one interval (plus slack).
const sqlitePoll = 50 * time.Millisecond

// TestSQLiteDirectSQL: rows inserted, updated (key changed) and deleted by
// another connection, not the service, reach the filter within the poll
// interval; a transaction that deletes and recreates a key leaves one copy;
// afterwards the filter holds one copy per row. Without the triggers none
// of it reaches the filter.
func TestSQLiteDirectSQL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	st, err := OpenSQLite(context.Background(), path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Seed(context.Background(), "p", 100); err != nil {
		t.Fatal(err)
	}
	s := newService(t, Config{Store: st, PollInterval: sqlitePoll})
	db := sqliteDirect(t, path)
	tbl := st.Table()
	var worst time.Duration
	for i := range 5 {
		k := fmt.Sprintf("direct%d", i)
		if code, _, src := do(s.Handler(), "GET", k, ""); code != 404 || src != "filter" {
			t.Fatalf("GET %s before the insert: %d from %q; want 404 from the filter", k, code, src)
		}
		sqliteExec(t, db, `INSERT INTO `+tbl+` VALUES (?, 'x')`, k)
		worst = max(worst, waitFor(t, sqlitePoll+applySlack, "accepts "+k, func() bool { return s.MayContain(k) }))
		if code, body, _ := do(s.Handler(), "GET", k, ""); code != 200 || body != "x" {
			t.Fatalf("GET %s after the direct insert: %d %q", k, code, body)
		}
	}
	t.Logf("direct INSERT committed -> the instance accepts the key (poll %v): worst %v over 5 keys", sqlitePoll, worst)
	gone := func(k string) func() bool { return func() bool { return s.filter().Count([]byte(k)) == 0 } }
	sqliteExec(t, db, `UPDATE `+tbl+` SET k = 'renamed0' WHERE k = 'direct0'`)
	waitFor(t, sqlitePoll+applySlack, "accepts renamed0", func() bool { return s.MayContain("renamed0") })
	waitFor(t, sqlitePoll+applySlack, "drops direct0", gone("direct0"))
	sqliteExec(t, db, `DELETE FROM `+tbl+` WHERE k IN ('direct1', ?)`, SeedKey("p", 7))
	waitFor(t, sqlitePoll+applySlack, "drops direct1", gone("direct1"))
	waitFor(t, sqlitePoll+applySlack, "drops p7", gone(SeedKey("p", 7)))
	sqliteExec(t, db, `UPDATE `+tbl+` SET v = 'y'`) // values only: nothing logged
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`DELETE FROM ` + tbl + ` WHERE k = 'direct2'`, `INSERT INTO ` + tbl + ` VALUES ('direct2', 'again')`} {
		if _, err := tx.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := s.catchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM ` + tbl).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if got := s.Stats().Keys; got != n {
		t.Fatalf("filter keys %d; want %d (one copy per row)", got, n)
	}
	if c := s.filter().Count([]byte("direct2")); c != 1 {
		t.Fatalf("%d copies of direct2 after DELETE+INSERT in one transaction; want 1", c)
	}
}

// TestSQLiteDirectWhileDown: a row inserted by another connection while the
// service is down is found after it restarts from its snapshot.
func TestSQLiteDirectWhileDown(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.db")
	snap := filepath.Join(t.TempDir(), "snap")
	st, err := OpenSQLite(ctx, path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Seed(ctx, "p", 200); err != nil {
		t.Fatal(err)
	}
	a, err := New(ctx, Config{Store: st, Snapshot: snap})
	if err != nil {
		t.Fatal(err)
	}
	do(a.Handler(), "PUT", "via-service", "x")
	if err := a.WriteSnapshot(ctx, snap); err != nil {
		t.Fatal(err)
	}
	a.Close()
	st.Close()

	db := sqliteDirect(t, path)
	sqliteExec(t, db, `INSERT INTO `+DefaultSQLiteTable+` VALUES ('while-down', 'x')`)
	sqliteExec(t, db, `DELETE FROM `+DefaultSQLiteTable+` WHERE k = ?`, SeedKey("p", 3))

	st2, err := OpenSQLite(ctx, path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st2.Close() })
	c := newService(t, Config{Store: st2, Snapshot: snap})
	if got := c.Stats().BuiltFrom; got != "snapshot" {
		t.Fatalf("built from %q; want snapshot", got)
	}
	if !c.MayContain("while-down") || !c.MayContain("via-service") {
		t.Fatal("a row inserted directly while the service was down is rejected after the restart from the snapshot")
	}
	if n := c.filter().Count([]byte(SeedKey("p", 3))); n != 0 {
		t.Fatalf("%d copies of the row deleted while down; want 0", n)
	}
	if got := c.Stats().Keys; got != 200+1+1-1 {
		t.Fatalf("filter keys %d; want 201", got)
	}
}

// TestSQLiteNotOwned: a table that existed before cacheguard opened the file
// is guarded but never emptied: Reset refuses it and its rows stay.
func TestSQLiteNotOwned(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "user.db")
	db := sqliteDirect(t, path)
	sqliteExec(t, db, `CREATE TABLE items (k TEXT PRIMARY KEY, v BLOB NOT NULL)`)
	sqliteExec(t, db, `INSERT INTO items VALUES ('mine1', 'a'), ('mine2', 'b')`)
	st, err := OpenSQLite(ctx, path, SQLiteOptions{Table: "items"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Reset(ctx); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("Reset of a table cacheguard did not create: %v; want ErrNotOwned", err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM items`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("the user's table after the refused Reset: %d rows, %v; want 2", n, err)
	}
	s := newService(t, Config{Store: st, PollInterval: sqlitePoll})
	if !s.MayContain("mine1") {
		t.Fatal("the user's row is rejected")
	}
	sqliteExec(t, db, `INSERT INTO items VALUES ('mine3', 'c')`)
	waitFor(t, sqlitePoll+applySlack, "accepts mine3", func() bool { return s.MayContain("mine3") })
	// The default table, which cacheguard creates, may be reset.
	own, err := OpenSQLite(ctx, path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	if err := own.Reset(ctx); err != nil {
		t.Fatalf("Reset of cacheguard's own table: %v", err)
	}
	if _, err := OpenSQLite(ctx, path, SQLiteOptions{Table: "items; drop table items"}); err == nil {
		t.Fatal("a table name with SQL in it: no error")
	}
	// A table whose k is not unique on its own is refused at open, with
	// the reason, instead of failing every PUT.
	sqliteExec(t, db, `CREATE TABLE loose (k TEXT, v BLOB NOT NULL)`)
	sqliteExec(t, db, `CREATE TABLE pair (k TEXT, v BLOB NOT NULL, UNIQUE (k, v))`)
	for _, tbl := range []string{"loose", "pair"} {
		if _, err := OpenSQLite(ctx, path, SQLiteOptions{Table: tbl}); err == nil || !strings.Contains(err.Error(), "no unique index") {
			t.Errorf("table %s without a unique k: error %v; want one naming the missing unique index", tbl, err)
		}
	}
}

// TestOverwriteReadsBack: a PUT that overwrites a row written around the
// service, before the follower applied it (204), is read back at once, as
// after a 201: the handler applies the log before answering. The poll
// interval is an hour, so only the PUT can have applied it.
func TestOverwriteReadsBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	st, err := OpenSQLite(context.Background(), path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s := newService(t, Config{Store: st, PollInterval: time.Hour})
	db := sqliteDirect(t, path)
	sqliteExec(t, db, `INSERT INTO `+st.Table()+` VALUES ('around', 'x')`)
	if code, _, src := do(s.Handler(), "GET", "around", ""); code != 404 || src != "filter" {
		t.Fatalf("GET before the overwrite: %d from %q; want 404 from the filter (the follower should not have run)", code, src)
	}
	if code, body, _ := do(s.Handler(), "PUT", "around", "y"); code != 204 {
		t.Fatalf("PUT over the row: %d %q; want 204", code, body)
	}
	if code, body, src := do(s.Handler(), "GET", "around", ""); code != 200 || body != "y" {
		t.Errorf("GET right after the 204: %d %q from %q; want 200 \"y\"", code, body, src)
	}
	if n := s.filter().Count([]byte("around")); n != 1 {
		t.Errorf("%d copies of the row's key; want 1", n)
	}
}

// TestAutomaticCapacityGrows: with the capacity chosen automatically, a
// filter that the table outgrows (here one loaded from a snapshot taken
// when the table was small, then rows written around the service) is
// rebuilt from a scan at twice the rows instead of staying bypassed, PUTs
// of new keys refused, until a restart with a -capacity given.
func TestAutomaticCapacityGrows(t *testing.T) {
	minCapacity = 1000 // a small table's filter: fast to outgrow
	t.Cleanup(func() { minCapacity = MinCapacity })
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.db")
	snap := filepath.Join(t.TempDir(), "s.snap")
	st, err := OpenSQLite(ctx, path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s := newService(t, Config{Store: st, PollInterval: sqlitePoll, Snapshot: snap})
	small := s.filter().Cap()
	if err := s.WriteSnapshot(ctx, snap); err != nil {
		t.Fatal(err)
	}
	s.Close()
	rows := small + small/4
	db := sqliteDirect(t, path)
	sqliteExec(t, db, `WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < ?)
		INSERT INTO `+st.Table()+` SELECT 'bulk' || i, x'00' FROM c`, rows)
	s = newService(t, Config{Store: st, PollInterval: sqlitePoll, Snapshot: snap})
	if src := s.Stats().BuiltFrom; src != "snapshot" && src != "rebuild" {
		t.Fatalf("built from %q; want the snapshot (then a rebuild)", src)
	}
	waitFor(t, 30*time.Second, "a rebuild at the larger size", func() bool {
		st := s.Stats()
		return st.Rebuilds > 0 && !st.Degraded && st.Capacity >= 2*rows
	})
	for _, k := range []string{"bulk1", fmt.Sprintf("bulk%d", rows)} {
		if !s.MayContain(k) {
			t.Errorf("%s rejected after the rebuild", k)
		}
	}
	if code, body, _ := do(s.Handler(), "PUT", "fresh", "v"); code != 201 {
		t.Errorf("PUT of a new key after the rebuild: %d %q; want 201", code, body)
	}
	t.Logf("a filter of %d slots for %d rows rebuilt to %d slots", small, rows, s.Stats().Capacity)
}

// TestGetDuringRebuildOfDegradedFilter: a filter bypassed because a row's
// copy did not fit (degraded) is rebuilt while GETs run. A GET that took
// the degraded filter before the swap and the flag after the rebuild
// cleared it consulted the filter that lacks the row, and rejected it
// although present and applied (within a few thousand rebuilds here); GETs
// read the flag first. Each round replays what catchUpLocked does when a
// row's copy does not fit: the filter (every row's copy but that one's) is
// the current one, the flag is set, then the row's entry counts as applied
// (here: the row is published to the readers), then a rebuild. A reader
// counts a rejection only when the row it checked was published throughout
// its check: every round reuses a row as the one that did not fit, so a
// check that began in an earlier round could meet the row after it had
// been taken out again (a new entry of it, not yet applied), which the
// service's claim does not cover.
func TestGetDuringRebuildOfDegradedFilter(t *testing.T) {
	ctx := context.Background()
	const rows = 200
	st := newSQLite(t, rows)
	s := newService(t, Config{Store: st, PollInterval: time.Hour, Capacity: 1000})
	type publication struct{ key string }
	var published atomic.Pointer[publication]           // the row whose entry was applied last
	published.Store(&publication{SeedKey("p", rows-1)}) // not round 0's missing row
	var stop atomic.Bool
	var rejected, gets atomic.Int64
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				p := published.Load()
				var ok bool
				if g == 0 {
					ok = s.MayContain(p.key)
				} else {
					// A 404 is a rejection; a 503 (the read ran
					// past RequestTimeout on a loaded machine) is not.
					code, _, _ := do(s.Handler(), "GET", p.key, "")
					ok = code != 404
				}
				if published.Load() != p {
					continue // a later round began during the check
				}
				gets.Add(1)
				if !ok {
					rejected.Add(1)
				}
			}
		}()
	}
	deadline := time.Now().Add(3 * time.Second)
	round := 0
	for ; time.Now().Before(deadline) && rejected.Load() == 0; round++ {
		missing := SeedKey("p", round%rows)
		f, err := cuckoo.New(1000)
		if err != nil {
			t.Fatal(err)
		}
		for i := range rows {
			if k := SeedKey("p", i); k != missing {
				if err := f.Insert([]byte(k)); err != nil {
					t.Fatal(err)
				}
			}
		}
		s.applyMu.Lock()
		s.filt.Store(f) // the readers' key is in it: it lacks only missing
		s.degraded.Store(true)
		published.Store(&publication{missing})
		s.needsRebuild.Store(true)
		s.applyMu.Unlock()
		if err := s.rebuild(ctx); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d rebuilds, %d checks of a row published throughout", round, gets.Load())
	if n := rejected.Load(); n > 0 {
		t.Errorf("a present, applied row was rejected %d times in %d rebuilds (%d GETs)", n, round, gets.Load())
	}
	if gets.Load() == 0 {
		t.Error("no reader checked a row published throughout its check: the test proved nothing")
	}
}

// TestDegradedFilterKeepsCopies: while the filter is bypassed because a
// copy did not fit, the log's deletions are not applied to it: the key
// whose copy is missing would have its 'D' remove the copy of another key
// with the same fingerprint and buckets, which a GET that read the flag
// before it was set may still look up. (The rebuild drops what is left.)
func TestDegradedFilterKeepsCopies(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.db")
	st, err := OpenSQLite(ctx, path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	db := sqliteDirect(t, path)
	s := newService(t, Config{Store: st, PollInterval: time.Hour})
	if code, _, _ := do(s.Handler(), "PUT", "a", "v"); code != 201 {
		t.Fatalf("PUT: %d", code)
	}
	s.degraded.Store(true) // as if another key's copy had not fit
	sqliteExec(t, db, `DELETE FROM `+st.Table()+` WHERE k = 'a'`)
	if err := s.catchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if n := s.filter().Count([]byte("a")); n != 1 {
		t.Errorf("a's copy count %d after its 'D' was applied to a degraded filter; want 1 (left in place)", n)
	}
	s.degraded.Store(false)
	// Two catch-ups: in one batch b's 'I' and 'D' net to zero and
	// nothing is inserted or deleted, whether deletions are applied or not.
	sqliteExec(t, db, `INSERT INTO `+st.Table()+` VALUES ('b', 'x')`)
	if err := s.catchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if n := s.filter().Count([]byte("b")); n != 1 {
		t.Fatalf("b's copy count %d after its 'I'; want 1", n)
	}
	sqliteExec(t, db, `DELETE FROM `+st.Table()+` WHERE k = 'b'`)
	if err := s.catchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if s.filter().Count([]byte("b")) != 0 {
		t.Errorf("b's 'D' not applied once the filter is no longer degraded")
	}
}
