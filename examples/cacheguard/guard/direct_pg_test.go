package guard

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// pgDirect opens a plain connection of its own, as psql or a batch job
// would: its writes go through no service.
func pgDirect(t *testing.T) *pgx.Conn {
	t.Helper()
	pgStore(t) // skips or fails without a DSN, like every PostgreSQL test
	c, err := pgx.Connect(context.Background(), os.Getenv(DSNEnv))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func sqlExec(t *testing.T, c *pgx.Conn, q string, args ...any) {
	t.Helper()
	if _, err := c.Exec(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// directBound is the bound the README states for a write by another client
// to reach an instance: the notification, or at the latest one poll
// interval; the slack is for a loaded 2-core machine under -race.
const directBound = DefaultPollInterval + applySlack

// TestPostgresDirectSQL: rows inserted, updated (key changed) and deleted
// with plain SQL through a connection of its own, not the service, reach
// both instances within the bound; a transaction that deletes and recreates
// a key, COPY, and updates of values only are handled; afterwards both
// filters hold exactly one copy per row. Without the triggers on the table
// nothing here reaches either filter.
func TestPostgresDirectSQL(t *testing.T) {
	ctx := context.Background()
	p := pgReset(t, 100)
	a := newService(t, Config{Store: p})
	b := newService(t, Config{Store: pgStore(t)})
	db := pgDirect(t)
	tbl := p.Table()
	svcs := []*Service{a, b}
	accepted := func(k string) func() bool {
		return func() bool { return a.MayContain(k) && b.MayContain(k) }
	}
	gone := func(k string) func() bool {
		return func() bool { return a.filter().Count([]byte(k)) == 0 && b.filter().Count([]byte(k)) == 0 }
	}

	var delays []time.Duration
	for i := range 5 {
		k := fmt.Sprintf("direct%d", i)
		for _, s := range svcs {
			if code, _, src := do(s.Handler(), "GET", k, ""); code != 404 || src != "filter" {
				t.Fatalf("GET %s before the insert: %d from %q; want 404 from the filter", k, code, src)
			}
		}
		sqlExec(t, db, `INSERT INTO `+tbl+` VALUES ($1, 'x')`, k)
		delays = append(delays, waitFor(t, directBound, "both accept "+k, accepted(k)))
		for _, s := range svcs {
			if code, body, _ := do(s.Handler(), "GET", k, ""); code != 200 || body != "x" {
				t.Fatalf("GET %s after the direct insert: %d %q; want 200 x", k, code, body)
			}
		}
	}
	slices.Sort(delays)
	t.Logf("direct INSERT committed -> both instances accept the key: median %v, max %v over %d keys", delays[len(delays)/2], delays[len(delays)-1], len(delays))

	// An UPDATE that changes the key: the old key goes, the new one comes.
	sqlExec(t, db, `UPDATE `+tbl+` SET k = 'renamed0' WHERE k = 'direct0'`)
	waitFor(t, directBound, "both accept renamed0", accepted("renamed0"))
	waitFor(t, directBound, "both drop direct0", gone("direct0"))
	// A DELETE of a row the service never saw written, and of a seeded one.
	sqlExec(t, db, `DELETE FROM `+tbl+` WHERE k IN ('direct1', $1)`, SeedKey("p", 7))
	waitFor(t, directBound, "both drop direct1", gone("direct1"))
	waitFor(t, directBound, "both drop p7", gone(SeedKey("p", 7)))
	// An update of values only logs nothing.
	_, before, _ := p.LogBounds(ctx)
	sqlExec(t, db, `UPDATE `+tbl+` SET v = 'y' WHERE k LIKE 'p%'`)
	if _, after, _ := p.LogBounds(ctx); after != before {
		t.Fatalf("an update of values only logged changes %d..%d", before+1, after)
	}
	// One transaction deletes and recreates a key: never absent to a
	// reader, one copy afterwards.
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`DELETE FROM ` + tbl + ` WHERE k = 'direct2'`, `INSERT INTO ` + tbl + ` VALUES ('direct2', 'again')`} {
		if _, err := tx.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// COPY fires the statement triggers too.
	var rows [][]any
	for i := range 50 {
		rows = append(rows, []any{fmt.Sprintf("copied%d", i), []byte("c")})
	}
	if _, err := db.CopyFrom(ctx, pgx.Identifier{"cacheguard", "items"}, []string{"k", "v"}, pgx.CopyFromRows(rows)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, directBound, "both accept copied49", accepted("copied49"))

	var n int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM `+tbl).Scan(&n); err != nil {
		t.Fatal(err)
	}
	for i, s := range svcs {
		if err := s.catchUp(ctx); err != nil {
			t.Fatal(err)
		}
		if got := s.Stats().Keys; got != n {
			t.Fatalf("instance %d: filter keys %d; want %d (one copy per row)", i, got, n)
		}
		if c := s.filter().Count([]byte("direct2")); c != 1 {
			t.Fatalf("instance %d: %d copies of direct2 after DELETE+INSERT in one transaction; want 1", i, c)
		}
		for j := range 50 {
			if k := fmt.Sprintf("copied%d", j); !s.MayContain(k) {
				t.Fatalf("instance %d: COPYed row %s rejected", i, k)
			}
		}
	}
}

// TestPostgresTruncate: a TRUNCATE removes rows without row triggers; its
// 'R' entry makes every instance rebuild from a scan, and rows inserted
// afterwards are accepted.
func TestPostgresTruncate(t *testing.T) {
	p := pgReset(t, 500)
	a := newService(t, Config{Store: p})
	db := pgDirect(t)
	sqlExec(t, db, `TRUNCATE `+p.Table())
	waitFor(t, directBound, "rebuild after TRUNCATE", func() bool { return a.Stats().Rebuilds == 1 })
	if st := a.Stats(); st.Keys != 0 || st.BuiltFrom != "rebuild" {
		t.Fatalf("after the rebuild: %d keys, built from %q; want 0, rebuild", st.Keys, st.BuiltFrom)
	}
	sqlExec(t, db, `INSERT INTO `+p.Table()+` VALUES ('after-truncate', 'x')`)
	waitFor(t, directBound, "accepts after-truncate", func() bool { return a.MayContain("after-truncate") })
	if code, _, _ := do(a.Handler(), "PUT", "put-after", "x"); code != 201 {
		t.Fatalf("PUT after the rebuild: %d; want 201", code)
	}
	if err := a.catchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := a.Stats().Keys; got != 2 {
		t.Fatalf("filter keys %d; want 2", got)
	}
}

// TestPostgresDirectWhileDown: rows inserted and deleted with plain SQL while
// the instance is down are found (and dropped) after it restarts from its
// snapshot: the log kept them.
func TestPostgresDirectWhileDown(t *testing.T) {
	ctx := context.Background()
	p := pgReset(t, 300)
	path := filepath.Join(t.TempDir(), "snap")
	a, err := New(ctx, Config{Store: p, Snapshot: path})
	if err != nil {
		t.Fatal(err)
	}
	do(a.Handler(), "PUT", "via-service", "x")
	if err := a.WriteSnapshot(ctx, path); err != nil {
		t.Fatal(err)
	}
	a.Close()

	db := pgDirect(t)
	sqlExec(t, db, `INSERT INTO `+p.Table()+` VALUES ('while-down', 'x')`)
	sqlExec(t, db, `DELETE FROM `+p.Table()+` WHERE k = $1`, SeedKey("p", 3))

	c := newService(t, Config{Store: pgStore(t), Snapshot: path})
	st := c.Stats()
	if st.BuiltFrom != "snapshot" {
		t.Fatalf("built from %q; want snapshot", st.BuiltFrom)
	}
	if !c.MayContain("while-down") || !c.MayContain("via-service") {
		t.Fatal("a row inserted directly while the instance was down is rejected after the restart from the snapshot")
	}
	if code, _, _ := do(c.Handler(), "GET", "while-down", ""); code != 200 {
		t.Fatalf("GET while-down: %d; want 200", code)
	}
	if n := c.filter().Count([]byte(SeedKey("p", 3))); n != 0 {
		t.Fatalf("%d copies of the row deleted while down; want 0", n)
	}
	if st.Keys != 300+1+1-1 {
		t.Fatalf("filter keys %d; want %d", st.Keys, 301)
	}
}

// TestPostgresNotOwned: a table the user created is guarded (its triggers
// are installed, direct writes are seen) but never emptied: Reset refuses
// it and its rows stay. A table with other columns, or with a disabled
// trigger, is refused at start.
func TestPostgresNotOwned(t *testing.T) {
	ctx := context.Background()
	db := pgDirect(t)
	// The test's own stand-in for a user's table, in a schema of its own.
	sqlExec(t, db, `CREATE SCHEMA IF NOT EXISTS cacheguard_test_user`)
	sqlExec(t, db, `DROP TABLE IF EXISTS cacheguard_test_user.items, cacheguard_test_user.other`)
	sqlExec(t, db, `CREATE TABLE cacheguard_test_user.items (k text PRIMARY KEY, v bytea NOT NULL)`)
	sqlExec(t, db, `INSERT INTO cacheguard_test_user.items VALUES ('mine1', 'a'), ('mine2', 'b')`)
	p, err := OpenPostgres(ctx, os.Getenv(DSNEnv), PGOptions{Table: "cacheguard_test_user.items"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Reset(ctx); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("Reset of a table cacheguard did not create: %v; want ErrNotOwned", err)
	}
	var n int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM cacheguard_test_user.items`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("the user's table after the refused Reset: %d rows, %v; want 2", n, err)
	}
	s := newService(t, Config{Store: p})
	if !s.MayContain("mine1") || !s.MayContain("mine2") {
		t.Fatal("the user's rows are rejected")
	}
	sqlExec(t, db, `INSERT INTO cacheguard_test_user.items VALUES ('mine3', 'c')`)
	waitFor(t, directBound, "accepts mine3", func() bool { return s.MayContain("mine3") })

	sqlExec(t, db, `CREATE TABLE cacheguard_test_user.other (id int PRIMARY KEY, k text)`)
	if _, err := OpenPostgres(ctx, os.Getenv(DSNEnv), PGOptions{Table: "cacheguard_test_user.other"}); err == nil {
		t.Fatal("a table without the k text and v bytea columns: no error")
	}
	sqlExec(t, db, `ALTER TABLE cacheguard_test_user.items DISABLE TRIGGER cacheguard_delete`)
	if _, err := OpenPostgres(ctx, os.Getenv(DSNEnv), PGOptions{Table: "cacheguard_test_user.items"}); err == nil {
		t.Fatal("a disabled trigger: no error")
	} else {
		t.Logf("disabled trigger: %v", err)
	}
	if _, err := OpenPostgres(ctx, os.Getenv(DSNEnv), PGOptions{Table: "items; drop table x"}); err == nil {
		t.Fatal("a table name with SQL in it: no error")
	}
}

// TestPostgresUserTriggersChangeKeys: a user's BEFORE triggers change the
// key a PUT writes. On insert (lower-casing it) the row holds "carol" for
// a PUT of "Carol": the filter must hold "carol", the key of the row and
// of its log entry (it held "Carol" before, and a GET of "carol" was
// rejected while the row was there). On the upsert's update (renaming the
// row) the PUT's transaction logs 'D' and 'I' entries that carry its
// origin: they must be applied, not skipped as the PUT's own creation (they
// were, and the renamed row's GET was rejected).
func TestPostgresUserTriggersChangeKeys(t *testing.T) {
	p := pgReset(t, 0)
	s := newService(t, Config{Store: p})
	db := pgDirect(t)
	tbl := p.Table()
	sqlExec(t, db, `CREATE SCHEMA IF NOT EXISTS cacheguard_test_user`)
	sqlExec(t, db, `CREATE OR REPLACE FUNCTION cacheguard_test_user.lower_k() RETURNS trigger LANGUAGE plpgsql AS $f$
		BEGIN NEW.k := lower(NEW.k); RETURN NEW; END $f$`)
	sqlExec(t, db, `CREATE OR REPLACE FUNCTION cacheguard_test_user.rename_k() RETURNS trigger LANGUAGE plpgsql AS $f$
		BEGIN IF NEW.v = 'rename' THEN NEW.k := NEW.k || '-renamed'; END IF; RETURN NEW; END $f$`)
	sqlExec(t, db, `CREATE TRIGGER test_lower BEFORE INSERT ON `+tbl+` FOR EACH ROW EXECUTE FUNCTION cacheguard_test_user.lower_k()`)
	sqlExec(t, db, `CREATE TRIGGER test_rename BEFORE UPDATE ON `+tbl+` FOR EACH ROW EXECUTE FUNCTION cacheguard_test_user.rename_k()`)
	t.Cleanup(func() {
		sqlExec(t, db, `DROP TRIGGER IF EXISTS test_lower ON `+tbl)
		sqlExec(t, db, `DROP TRIGGER IF EXISTS test_rename ON `+tbl)
	})
	h := s.Handler()
	if code, body, _ := do(h, "PUT", "Carol", "x"); code != 201 {
		t.Fatalf("PUT Carol: %d %q", code, body)
	}
	if code, body, src := do(h, "GET", "carol", ""); code != 200 {
		t.Errorf("GET carol, the row the PUT of Carol stored: %d %q from %q; want 200", code, body, src)
	}
	if code, _, src := do(h, "GET", "Carol", ""); code != 404 {
		t.Errorf("GET Carol (no such row): %d from %q; want 404", code, src)
	}
	if code, body, _ := do(h, "PUT", "carol", "rename"); code != 204 {
		t.Fatalf("PUT carol (an update the trigger turns into a rename): %d %q", code, body)
	}
	waitFor(t, directBound, "the filter accepts carol-renamed", func() bool { return s.MayContain("carol-renamed") })
	if code, body, src := do(h, "GET", "carol-renamed", ""); code != 200 || body != "rename" {
		t.Errorf("GET carol-renamed: %d %q from %q; want 200 rename", code, body, src)
	}
	if n := s.filter().Count([]byte("carol")); n != 0 {
		t.Errorf("carol's copies after the rename: %d; want 0", n)
	}
}

// pgWithTriggers guards a fresh table cacheguard_test_user.trig with the
// user's setup (functions, triggers) run on it, and returns its store and a
// service.
func pgWithTriggers(t *testing.T, setup ...string) (*Postgres, *Service) {
	t.Helper()
	ctx := context.Background()
	db := pgDirect(t)
	sqlExec(t, db, `CREATE SCHEMA IF NOT EXISTS cacheguard_test_user`)
	sqlExec(t, db, `DROP TABLE IF EXISTS cacheguard_test_user.trig CASCADE`)
	p, err := OpenPostgres(ctx, os.Getenv(DSNEnv), PGOptions{Table: "cacheguard_test_user.trig"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(); sqlExec(t, db, `DROP TABLE IF EXISTS cacheguard_test_user.trig CASCADE`) })
	for _, q := range setup {
		sqlExec(t, db, q)
	}
	s := newService(t, Config{Store: p})
	return p, s
}

// pgAliasTrigger is a user's AFTER INSERT statement trigger, sorting after
// cacheguard_insert, that writes an alias row, k:alias, for every row
// inserted into cacheguard_test_user.trig (pgWithTriggers' setup).
var pgAliasTrigger = []string{
	`CREATE OR REPLACE FUNCTION cacheguard_test_user.alias() RETURNS trigger LANGUAGE plpgsql AS $f$
	BEGIN
		IF EXISTS (SELECT 1 FROM nr WHERE k NOT LIKE '%:alias') THEN
			INSERT INTO cacheguard_test_user.trig (k, v) SELECT k || ':alias', v FROM nr WHERE k NOT LIKE '%:alias';
		END IF;
		RETURN NULL;
	END $f$`,
	`CREATE TRIGGER zz_alias AFTER INSERT ON cacheguard_test_user.trig REFERENCING NEW TABLE AS nr FOR EACH STATEMENT EXECUTE FUNCTION cacheguard_test_user.alias()`,
}

// TestPostgresStatementTriggerAfterOwnEntry: pgAliasTrigger writes another
// row in the PUT's transaction. When the PUT took cacheguard.seq (the
// transaction's last entry) for its row's, it recorded the alias row's
// entry in own and its catch-up applied its own row's entry: two copies of
// a, none of a:alias, whose GET was rejected while the row was present.
func TestPostgresStatementTriggerAfterOwnEntry(t *testing.T) {
	_, s := pgWithTriggers(t, pgAliasTrigger...)
	h := s.Handler()
	if code, body, _ := do(h, "PUT", "a", "x"); code != 201 {
		t.Fatalf("PUT a: %d %q", code, body)
	}
	if err := s.catchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond) // past the poll bound, too
	if code, _, src := do(h, "GET", "a:alias", ""); code != 200 {
		t.Errorf("GET a:alias (row committed by the PUT's transaction): %d from %q; want 200", code, src)
	}
	if n := s.filter().Count([]byte("a")); n != 1 {
		t.Errorf("copies of a: %d; want 1", n)
	}
}

// TestPostgresOwnTxDeleteThenRollback: a user's BEFORE INSERT trigger
// deletes another row in the PUT's transaction (eviction), and the commit
// then fails (a deferred constraint). When created's catch-up read that
// 'D' through the uncommitted transaction, it removed the victim's copy,
// and the rollback left the row present without it.
func TestPostgresOwnTxDeleteThenRollback(t *testing.T) {
	p, s := pgWithTriggers(t,
		`CREATE OR REPLACE FUNCTION cacheguard_test_user.evict() RETURNS trigger LANGUAGE plpgsql AS $f$
		BEGIN IF NEW.k = 'boom' THEN DELETE FROM cacheguard_test_user.trig WHERE k = 'victim'; END IF; RETURN NEW; END $f$`,
		`CREATE OR REPLACE FUNCTION cacheguard_test_user.check() RETURNS trigger LANGUAGE plpgsql AS $f$
		BEGIN IF NEW.k = 'boom' THEN RAISE EXCEPTION 'deferred check failed'; END IF; RETURN NULL; END $f$`,
		`CREATE TRIGGER evict BEFORE INSERT ON cacheguard_test_user.trig FOR EACH ROW EXECUTE FUNCTION cacheguard_test_user.evict()`,
		`CREATE CONSTRAINT TRIGGER check_k AFTER INSERT ON cacheguard_test_user.trig DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION cacheguard_test_user.check()`)
	h := s.Handler()
	if code, body, _ := do(h, "PUT", "victim", "precious"); code != 201 {
		t.Fatalf("PUT victim: %d %q", code, body)
	}
	if code, body, _ := do(h, "PUT", "boom", "x"); code != 503 {
		t.Fatalf("PUT boom: %d %q; want 503 (the commit fails)", code, body)
	}
	if _, ok, _ := p.Get(context.Background(), "victim"); !ok {
		t.Fatal("victim is gone from the database")
	}
	if code, body, src := do(h, "GET", "victim", ""); code != 200 {
		t.Errorf("GET victim (row present): %d %q from %q; want 200", code, body, src)
	}
}

// oldAppend is cacheguard.append as the previous release created it in
// OpenPostgres (CREATE OR REPLACE): it sets cacheguard.seq only.
var oldAppend = `CREATE OR REPLACE FUNCTION cacheguard.append(rel oid, op char, keys text[]) RETURNS void
LANGUAGE plpgsql AS $f$
BEGIN
	IF cardinality(keys) = 0 THEN
		RETURN;
	END IF;
	PERFORM pg_advisory_xact_lock(` + strconv.Itoa(logLock) + `);
	INSERT INTO cacheguard.changes (tbl, op, k, origin)
		SELECT rel, op, u, coalesce(current_setting('cacheguard.origin', true), '') FROM unnest(keys) AS u;
	PERFORM set_config('cacheguard.seq', currval(pg_get_serial_sequence('cacheguard.changes', 'seq'))::text, true);
	PERFORM pg_notify('` + NotifyChannel + `', rel::text);
END
$f$`

// TestPostgresOlderAppendFunction: during a rolling upgrade an instance of
// the previous release starts (or restarts) after this one; its
// OpenPostgres runs CREATE OR REPLACE FUNCTION cacheguard.append with the
// old body, which never sets cacheguard.first. Creating PUTs of this
// instance must go on (they failed, 503, when Put found no first and took
// that for missing triggers).
func TestPostgresOlderAppendFunction(t *testing.T) {
	ctx := context.Background()
	db := pgDirect(t)
	_, s := pgWithTriggers(t)
	h := s.Handler()
	if code, body, _ := do(h, "PUT", "before", "x"); code != 201 {
		t.Fatalf("PUT before (new function): %d %q", code, body)
	}
	// The older instance starts: its schema step replaces the function.
	sqlExec(t, db, oldAppend)
	t.Cleanup(func() {
		// Put the current function back for the other tests.
		q, err := OpenPostgres(ctx, os.Getenv(DSNEnv), PGOptions{Table: "cacheguard_test_user.trig"})
		if err == nil {
			q.Close()
		}
	})
	if code, body, _ := do(h, "PUT", "after", "x"); code != 201 {
		t.Errorf("PUT after (older instance re-created cacheguard.append): %d %q; want 201", code, body)
	}
}

// TestPostgresTriggerRowOfOwnPutAtOnce: TestSQLiteTriggerRowOfOwnPutAtOnce
// on PostgreSQL (pgAliasTrigger), without notifications, so that only the
// PUT's own catch-up can have applied the alias row before the 201.
func TestPostgresTriggerRowOfOwnPutAtOnce(t *testing.T) {
	p, s0 := pgWithTriggers(t, pgAliasTrigger...)
	s0.Close()
	s := newService(t, Config{Store: p, NoListen: true}) // as when a notification is lost: the poll bound
	h := s.Handler()
	if code, body, _ := do(h, "PUT", "a", "x"); code != 201 {
		t.Fatalf("PUT a: %d %q", code, body)
	}
	if code, _, src := do(h, "GET", "a:alias", ""); code != 200 {
		t.Errorf("GET a:alias right after the PUT that committed it: %d from %q; want 200", code, src)
	}
}

// TestPostgresSeedKeys: Seed's keys in SQL are SeedKey's, also past eight
// digits (where lpad alone cut them to eight).
func TestPostgresSeedKeys(t *testing.T) {
	db := pgDirect(t)
	for _, i := range []int{0, 7, 99999999, 100000000, 123456789, 1 << 40} {
		var got string
		if err := db.QueryRow(context.Background(), `SELECT `+pgSeedKey+` FROM (VALUES ($2::bigint)) AS v(i)`, "key", i).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if want := SeedKey("key", i); got != want {
			t.Errorf("key %d: SQL gives %q, SeedKey %q", i, got, want)
		}
	}
}
