package guard

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Setups at the edges of the README's promises: a guarded table replaced
// or renamed under its name, inheritance and partitions, snapshots around
// a TRUNCATE or a restore from backup, one Store serving two Services in
// turn. Each would break a promise if the code did not refuse or handle it.

// TestSQLiteRecreatedTableNotOwned: cacheguard created the table "items" (the
// marker says so); the user then dropped it and created a table of their own
// under the same name, with rows. Reset must refuse it, through a handle
// opened before the swap and through one opened after: the marker belonged
// to the dropped table.
func TestSQLiteRecreatedTableNotOwned(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.db")
	old, err := OpenSQLite(ctx, path, SQLiteOptions{Table: "items"})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	db := sqliteDirect(t, path)
	sqliteExec(t, db, `DROP TABLE items`)
	sqliteExec(t, db, `CREATE TABLE items (k TEXT PRIMARY KEY, v BLOB NOT NULL)`)
	sqliteExec(t, db, `INSERT INTO items VALUES ('mine1', 'a'), ('mine2', 'b')`)
	rows := func() int {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM items`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	checkResetRefused(t, old, rows)
	st, err := OpenSQLite(ctx, path, SQLiteOptions{Table: "items"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	checkResetRefused(t, st, rows)
}

// checkResetRefused checks that Reset through s refuses the user's table
// with ErrNotOwned and leaves its two rows (rows counts them).
func checkResetRefused(t *testing.T, s interface{ Reset(context.Context) error }, rows func() int) {
	t.Helper()
	if err := s.Reset(context.Background()); !errors.Is(err, ErrNotOwned) {
		t.Errorf("Reset of a table recreated by its user: %v; want ErrNotOwned", err)
	}
	if n := rows(); n != 2 {
		t.Fatalf("the user's table after Reset: %d rows; want 2", n)
	}
}

// TestPostgresRecreatedTableNotOwned: the same with PostgreSQL. OpenPostgres
// registers the new table under its new oid; a handle opened before the
// swap must not go by the old oid's marker and truncate the table the name
// resolves to now, the user's.
func TestPostgresRecreatedTableNotOwned(t *testing.T) {
	ctx := context.Background()
	db := pgDirect(t)
	const tbl = "cacheguard_test_user.edge_recreated"
	sqlExec(t, db, `CREATE SCHEMA IF NOT EXISTS cacheguard_test_user`)
	sqlExec(t, db, `DROP TABLE IF EXISTS `+tbl)
	old, err := OpenPostgres(ctx, os.Getenv(DSNEnv), PGOptions{Table: tbl}) // creates it: owned
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	sqlExec(t, db, `DROP TABLE `+tbl)
	sqlExec(t, db, `CREATE TABLE `+tbl+` (k text PRIMARY KEY, v bytea NOT NULL)`)
	sqlExec(t, db, `INSERT INTO `+tbl+` VALUES ('mine1', 'a'), ('mine2', 'b')`)
	rows := func() int {
		var n int
		if err := db.QueryRow(ctx, `SELECT count(*) FROM `+tbl).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	checkResetRefused(t, old, rows)
	p, err := OpenPostgres(ctx, os.Getenv(DSNEnv), PGOptions{Table: tbl})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	checkResetRefused(t, p, rows)
}

// TestSnapshotAfterTruncateRebuilds: a snapshot written after the 'R' of a
// TRUNCATE was applied but before the rebuild ran holds the truncated rows'
// copies at a position past the 'R': an instance loading it never rebuilds,
// and keeps them (and their share of the capacity) for good.
func TestSnapshotAfterTruncateRebuilds(t *testing.T) {
	ctx := context.Background()
	p := pgReset(t, 500)
	path := filepath.Join(t.TempDir(), "snap")
	a, err := New(ctx, Config{Store: p, Snapshot: path, NoListen: true, PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	db := pgDirect(t)
	sqlExec(t, db, `TRUNCATE `+p.Table())
	if err := a.WriteSnapshot(ctx, path); err != nil {
		t.Fatal(err)
	}
	a.Close()
	c := newService(t, Config{Store: pgStore(t), Snapshot: path})
	waitFor(t, directBound, "the instance loaded from the snapshot holds no truncated row", func() bool {
		return c.Stats().Keys == 0 && !c.MayContain(SeedKey("p", 7))
	})
}

// TestPostgresInheritanceRefused: rows written into an inheritance child or a
// partition of the guarded table are read by the service's SELECTs on the
// parent, but the parent's statement triggers do not fire for them: the
// filter would reject present rows for good. Such tables must be refused.
func TestPostgresInheritanceRefused(t *testing.T) {
	ctx := context.Background()
	db := pgDirect(t)
	sqlExec(t, db, `CREATE SCHEMA IF NOT EXISTS cacheguard_test_user`)
	for _, tc := range []struct{ name, setup, child string }{
		{"inherited", `CREATE TABLE cacheguard_test_user.edge_parent (k text PRIMARY KEY, v bytea NOT NULL);
			CREATE TABLE cacheguard_test_user.edge_child (PRIMARY KEY (k)) INHERITS (cacheguard_test_user.edge_parent)`, "cacheguard_test_user.edge_child"},
		{"partitioned", `CREATE TABLE cacheguard_test_user.edge_parent (k text PRIMARY KEY, v bytea NOT NULL) PARTITION BY HASH (k);
			CREATE TABLE cacheguard_test_user.edge_child PARTITION OF cacheguard_test_user.edge_parent FOR VALUES WITH (MODULUS 1, REMAINDER 0)`, "cacheguard_test_user.edge_child"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sqlExec(t, db, `DROP TABLE IF EXISTS cacheguard_test_user.edge_parent CASCADE`)
			sqlExec(t, db, tc.setup)
			for _, guarded := range []string{"cacheguard_test_user.edge_parent", tc.child} {
				p, err := OpenPostgres(ctx, os.Getenv(DSNEnv), PGOptions{Table: guarded})
				if err != nil {
					t.Logf("%s refused: %v", guarded, err)
					continue
				}
				s := newService(t, Config{Store: p})
				key := "through-the-other-" + guarded
				target := tc.child
				if guarded == tc.child {
					target = "cacheguard_test_user.edge_parent"
				}
				sqlExec(t, db, `INSERT INTO `+target+` VALUES ($1, 'x')`, key)
				if guarded == tc.child && tc.name == "inherited" {
					// Rows inserted into the parent are not the
					// child's, but DELETE or UPDATE on the parent
					// change the child's rows without its triggers.
					t.Errorf("an inheritance child was accepted")
					s.Close()
					p.Close()
					continue
				}
				if _, ok, err := p.Get(ctx, key); err != nil || !ok {
					t.Fatalf("Get %s through %s: %v %v", key, guarded, ok, err)
				}
				time.Sleep(directBound)
				if !s.MayContain(key) {
					t.Errorf("guarding %s: a row written through %s is present but rejected", guarded, target)
				}
				s.Close()
				p.Close()
			}
		})
	}
	sqlExec(t, db, `DROP TABLE IF EXISTS cacheguard_test_user.edge_parent CASCADE`)
}

// TestSameStoreTwice: a Service closed and a new one started on the same
// Store (a reload inside one process) with the snapshot the first one
// wrote. Each Service has an origin of its own, so the second one applies
// the first one's PUTs after the snapshot instead of taking them for its
// own and skipping them (which would reject present rows).
func TestSameStoreTwice(t *testing.T) {
	ctx := context.Background()
	st := newSQLite(t, 10)
	snap := filepath.Join(t.TempDir(), "snap")
	a, err := New(ctx, Config{Store: st, Snapshot: snap})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.WriteSnapshot(ctx, snap); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := do(a.Handler(), "PUT", "after-snapshot", "x"); code != 201 {
		t.Fatalf("PUT: %d", code)
	}
	a.Close()
	b := newService(t, Config{Store: st, Snapshot: snap})
	if code, _, src := do(b.Handler(), "GET", "after-snapshot", ""); code != 200 {
		t.Fatalf("GET of a present row from the second service on the same store: %d from %s; want 200", code, src)
	}
}

// TestSQLiteRenamedTableRefused: cacheguard's table was renamed and another
// table created under the old name. SQLite moves the triggers with the
// renamed table (names and bodies unchanged: their entries still carry the
// old name), so CREATE TRIGGER IF NOT EXISTS would create none on the new
// table: its writes would not be logged, and the renamed table's would be
// taken for its. Opening it must fail.
func TestSQLiteRenamedTableRefused(t *testing.T) {
	ctx := context.Background()
	path, db := sqliteItemsGuarded(t)
	sqliteExec(t, db, `ALTER TABLE items RENAME TO items_old`)
	sqliteExec(t, db, `CREATE TABLE items (k TEXT PRIMARY KEY, v BLOB NOT NULL)`)
	st, err := OpenSQLite(ctx, path, SQLiteOptions{Table: "items"})
	if err != nil {
		t.Logf("refused: %v", err)
		return
	}
	defer st.Close()
	s := newService(t, Config{Store: st, PollInterval: sqlitePoll})
	sqliteExec(t, db, `INSERT INTO items VALUES ('new-row', 'x')`)
	time.Sleep(10 * sqlitePoll)
	if !s.MayContain("new-row") {
		t.Error("a row inserted into the table that took the renamed table's name is present but rejected")
	}
}

// TestSnapshotAfterRestoreRefused: the database is restored from a backup
// older than the snapshot and written to before the instance restarts. The
// log reaches beyond the snapshot's position again, but its seqs up to the
// position now name new entries, which the instance loading the snapshot
// would skip: present rows rejected for good. The snapshot must be refused.
func TestSnapshotAfterRestoreRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "t.db")
	snap := filepath.Join(dir, "snap")
	st, err := OpenSQLite(ctx, path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Seed(ctx, "p", 10); err != nil {
		t.Fatal(err)
	}
	st.Close()
	backup, err := os.ReadFile(path) // closed: the WAL is checkpointed
	if err != nil {
		t.Fatal(err)
	}
	st, err = OpenSQLite(ctx, path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(ctx, Config{Store: st, Snapshot: snap})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if code, _, _ := do(a.Handler(), "PUT", fmt.Sprintf("before-restore%d", i), "x"); code != 201 {
			t.Fatalf("PUT: %d", code)
		}
	}
	if err := a.WriteSnapshot(ctx, snap); err != nil {
		t.Fatal(err)
	}
	a.Close()
	st.Close()
	os.Remove(path + "-wal")
	os.Remove(path + "-shm")
	if err := os.WriteFile(path, backup, 0o644); err != nil { // the restore
		t.Fatal(err)
	}
	db := sqliteDirect(t, path)
	for i := range 5 {
		sqliteExec(t, db, `INSERT INTO `+DefaultSQLiteTable+` VALUES (?, 'x')`, fmt.Sprintf("after-restore%d", i))
	}
	st2, err := OpenSQLite(ctx, path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	c, err := New(ctx, Config{Store: st2, Snapshot: snap})
	if errors.Is(err, ErrSnapshotMismatch) {
		t.Logf("refused: %v", err)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range 5 {
		k := fmt.Sprintf("after-restore%d", i)
		if code, _, src := do(c.Handler(), "GET", k, ""); code != 200 {
			t.Errorf("GET %s (present): %d from %s; want 200", k, code, src)
		}
	}
}

// TestSQLiteKeyComparedAsBytes: a table whose key column the database
// compares otherwise than byte for byte (a collation other than BINARY on
// k or on a unique index of k, or k without TEXT affinity) is refused at
// start (a search index with another collation is not):
// the database would find "Alice" for a GET of "alice" (or the row 42 for
// "042"), which the filter, comparing bytes, rejects. Such tables were
// accepted before.
func TestSQLiteKeyComparedAsBytes(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, create string
		ok           bool
	}{
		{"text", `CREATE TABLE t (k TEXT PRIMARY KEY, v BLOB)`, true},
		{"varchar", `CREATE TABLE t (k VARCHAR(300) NOT NULL UNIQUE, v BLOB)`, true},
		{"binary", `CREATE TABLE t (k TEXT COLLATE BINARY PRIMARY KEY, v BLOB)`, true},
		{"nocase column", `CREATE TABLE t (k TEXT COLLATE NOCASE PRIMARY KEY, v BLOB)`, false},
		{"rtrim column", `CREATE TABLE t (k TEXT COLLATE RTRIM PRIMARY KEY, v BLOB)`, false},
		{"nocase column, binary index", `CREATE TABLE t (k TEXT COLLATE NOCASE, v BLOB); CREATE UNIQUE INDEX tk ON t (k COLLATE BINARY)`, false},
		{"nocase index", `CREATE TABLE t (k TEXT, v BLOB); CREATE UNIQUE INDEX tk ON t (k COLLATE NOCASE)`, false},
		{"nocase search index", `CREATE TABLE t (k TEXT PRIMARY KEY, v BLOB); CREATE INDEX tk ON t (k COLLATE NOCASE)`, true},
		{"nocase second unique index", `CREATE TABLE t (k TEXT PRIMARY KEY, v BLOB); CREATE UNIQUE INDEX tk ON t (k COLLATE NOCASE)`, false},
		{"integer", `CREATE TABLE t (k INTEGER UNIQUE, v BLOB)`, false},
		{"numeric", `CREATE TABLE t (k NUMERIC PRIMARY KEY, v BLOB)`, false},
		{"no type", `CREATE TABLE t (k PRIMARY KEY, v BLOB)`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "db")
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(tc.create); err != nil {
				t.Fatal(err)
			}
			db.Close()
			s, err := OpenSQLite(ctx, path, SQLiteOptions{Table: "t"})
			if tc.ok != (err == nil) {
				t.Fatalf("OpenSQLite: %v; want accepted %v", err, tc.ok)
			}
			if err == nil {
				s.Close()
			} else {
				t.Log(err)
			}
		})
	}
}

// TestPostgresKeyComparedAsBytes: a table whose k, or a unique index on k,
// has a non-deterministic collation (here case-insensitive) is refused at
// start; a search index with one is not.
func TestPostgresKeyComparedAsBytes(t *testing.T) {
	ctx := context.Background()
	db := pgDirect(t)
	sqlExec(t, db, `CREATE SCHEMA IF NOT EXISTS cacheguard_test_user`)
	var icu bool
	if err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_collation WHERE collprovider = 'i')`).Scan(&icu); err != nil {
		t.Fatal(err)
	}
	if !icu {
		t.Skip("this PostgreSQL has no ICU collations, the only non-deterministic ones")
	}
	sqlExec(t, db, `CREATE COLLATION IF NOT EXISTS cacheguard_test_user.ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)`)
	for _, tc := range []struct {
		name, create string
		ok           bool
	}{
		{"text", `CREATE TABLE cacheguard_test_user.coll (k text PRIMARY KEY, v bytea NOT NULL)`, true},
		{"C collation", `CREATE TABLE cacheguard_test_user.coll (k text COLLATE "C" PRIMARY KEY, v bytea NOT NULL)`, true},
		{"case-insensitive column", `CREATE TABLE cacheguard_test_user.coll (k text COLLATE cacheguard_test_user.ci PRIMARY KEY, v bytea NOT NULL)`, false},
		{"case-insensitive search index", `CREATE TABLE cacheguard_test_user.coll (k text PRIMARY KEY, v bytea NOT NULL);
			CREATE INDEX ON cacheguard_test_user.coll (k COLLATE cacheguard_test_user.ci)`, true},
		{"case-insensitive unique index", `CREATE TABLE cacheguard_test_user.coll (k text PRIMARY KEY, v bytea NOT NULL);
			CREATE UNIQUE INDEX ON cacheguard_test_user.coll (k COLLATE cacheguard_test_user.ci)`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sqlExec(t, db, `DROP TABLE IF EXISTS cacheguard_test_user.coll CASCADE`)
			sqlExec(t, db, tc.create)
			p, err := OpenPostgres(ctx, os.Getenv(DSNEnv), PGOptions{Table: "cacheguard_test_user.coll"})
			if tc.ok != (err == nil) {
				t.Fatalf("OpenPostgres: %v; want accepted %v", err, tc.ok)
			}
			if err == nil {
				p.Close()
			} else {
				t.Log(err)
			}
		})
	}
	sqlExec(t, db, `DROP TABLE IF EXISTS cacheguard_test_user.coll CASCADE`)
}

// TestPostgresSearchPathKeepsIdentity: instances whose sessions have
// different search_paths name the guarded table the same way, so none of
// them takes the other's name for a rename: the table keeps its identity
// (guard_id, which snapshots are checked against) and its ownership.
// Recording regclass::text, an instance with cacheguard on its path
// recorded "items", renewed the identity and dropped the ownership, and
// every other instance's snapshot was refused. A bare name recorded by an
// older version stays as it is (instances of that version, still running
// in a rolling upgrade, would take a qualified one for a rename), keeps the
// identity and the ownership (Reset works), and a snapshot that such a
// version wrote under the bare name loads.
func TestPostgresSearchPathKeepsIdentity(t *testing.T) {
	ctx := context.Background()
	db := pgDirect(t)
	dsn := os.Getenv(DSNEnv)
	p := pgReset(t, 10) // the default table, created by cacheguard: owned
	var relid uint32
	if err := db.QueryRow(ctx, `SELECT 'cacheguard.items'::regclass::oid`).Scan(&relid); err != nil {
		t.Fatal(err)
	}
	record := func() (name, id string, owned bool) {
		t.Helper()
		if err := db.QueryRow(ctx, `SELECT name, guard_id, created_by_cacheguard FROM cacheguard.guarded WHERE tbl = $1`, relid).Scan(&name, &id, &owned); err != nil {
			t.Fatal(err)
		}
		return
	}
	// As this version records a table it registers first (an earlier run
	// of this test leaves the bare name).
	sqlExec(t, db, `UPDATE cacheguard.guarded SET name = 'cacheguard.items', created_by_cacheguard = true WHERE tbl = $1`, relid)
	name, id, owned := record()
	for _, tc := range []struct{ what, setup, dsn, wantName string }{
		{"another search_path", "", dsn + " search_path=cacheguard,public", name},
		{"a bare name recorded by an older version", `UPDATE cacheguard.guarded SET name = 'items' WHERE tbl = $1`, dsn, "items"},
	} {
		if tc.setup != "" {
			sqlExec(t, db, tc.setup, relid)
		}
		q, err := OpenPostgres(ctx, tc.dsn, PGOptions{Table: "cacheguard.items"})
		if err != nil {
			t.Fatalf("%s: %v", tc.what, err)
		}
		n, i, o := record()
		if n != tc.wantName || i != id || o != owned || q.GuardID() != p.GuardID() {
			t.Errorf("%s: recorded (%s, %s, owned %v), instance id %s; want (%s, %s, owned %v) and %s", tc.what, n, i, o, q.GuardID(), tc.wantName, id, owned, p.GuardID())
		}
		q.Close()
	}
	// The record is bare now. Reset finds the table owned.
	q, err := OpenPostgres(ctx, dsn, PGOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if err := q.Reset(ctx); err != nil {
		t.Fatalf("Reset with the bare name recorded: %v", err)
	}
	if err := q.Seed(ctx, "p", 10); err != nil {
		t.Fatal(err)
	}
	// A snapshot written under the bare name loads.
	s := newService(t, Config{Store: q})
	path := filepath.Join(t.TempDir(), "snap")
	if err := s.WriteSnapshot(ctx, path); err != nil {
		t.Fatal(err)
	}
	s.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old := bytes.Replace(b, []byte(`"table":"cacheguard.items"`), []byte(`"table":"items"`), 1)
	if bytes.Equal(old, b) {
		t.Fatalf("no table name to rewrite in the snapshot's header")
	}
	if err := os.WriteFile(path, old, 0o600); err != nil {
		t.Fatal(err)
	}
	if src := newService(t, Config{Store: q, Snapshot: path}).Stats().BuiltFrom; src != "snapshot" {
		t.Errorf("a snapshot written under the bare name: built from %q; want snapshot", src)
	}
}

// TestSQLiteTableNameCase: SQLite's names are case-insensitive, so -table
// Items names the table made as items, and the instance logs and reads it
// under the name the table has (its triggers' name for it). An instance
// started with the name in another case failed with "table items already
// exists".
func TestSQLiteTableNameCase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.db")
	first, err := OpenSQLite(ctx, path, SQLiteOptions{Table: "items"})
	if err != nil {
		t.Fatal(err)
	}
	first.Close()
	st, err := OpenSQLite(ctx, path, SQLiteOptions{Table: "Items"})
	if err != nil {
		t.Fatalf("-table Items for a table made as items: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	if st.Table() != "items" {
		t.Errorf("Table() = %q; want the table's own name, items", st.Table())
	}
	s := newService(t, Config{Store: st, PollInterval: sqlitePoll})
	sqliteExec(t, sqliteDirect(t, path), `INSERT INTO items VALUES ('direct', 'x')`)
	waitFor(t, sqlitePoll+applySlack, "accepts a row written around it", func() bool { return s.MayContain("direct") })
}

// TestPostgresTableNameCase: PostgreSQL folds an unquoted Users to users, so
// -table Users would create and guard an empty users beside the "Users" an
// ORM made (whose rows the filter would then reject). It is refused, and
// nothing is created.
func TestPostgresTableNameCase(t *testing.T) {
	ctx := context.Background()
	db := pgDirect(t)
	sqlExec(t, db, `CREATE SCHEMA IF NOT EXISTS cacheguard_test_user`)
	sqlExec(t, db, `DROP TABLE IF EXISTS cacheguard_test_user.users`)
	p, err := OpenPostgres(ctx, os.Getenv(DSNEnv), PGOptions{Table: "cacheguard_test_user.Users"})
	if err == nil {
		p.Close()
		t.Fatal("-table with capitals accepted")
	}
	if !strings.Contains(err.Error(), "lower case") {
		t.Errorf("error %q; want one saying to give the name in lower case", err)
	}
	var made bool
	if err := db.QueryRow(ctx, `SELECT to_regclass('cacheguard_test_user.users') IS NOT NULL`).Scan(&made); err != nil {
		t.Fatal(err)
	}
	if made {
		t.Error("the folded table was created")
	}
}

// TestSQLiteCaseRenameRefused: a table renamed with a change of case keeps
// triggers whose text logs the old spelling, while the instance reads the
// log under the table's new one: every creating PUT failed (no entry for
// the new row) and rows written around the service were never applied. The
// start is refused with what to do; after the triggers are dropped, the
// table is guarded again under its new name.
func TestSQLiteCaseRenameRefused(t *testing.T) {
	ctx := context.Background()
	path, db := sqliteItemsGuarded(t)
	sqliteExec(t, db, `ALTER TABLE items RENAME TO tmp`)
	sqliteExec(t, db, `ALTER TABLE tmp RENAME TO Items`)
	for _, name := range []string{"items", "Items"} {
		st, err := OpenSQLite(ctx, path, SQLiteOptions{Table: name})
		if err == nil {
			st.Close()
			t.Fatalf("-table %s after the rename: accepted", name)
		}
		if !strings.Contains(err.Error(), "another spelling") {
			t.Errorf("-table %s: %v; want the spelling named", name, err)
		}
	}
	for _, prefix := range sqliteTriggerNames {
		sqliteExec(t, db, `DROP TRIGGER `+prefix+`items`)
	}
	st, err := OpenSQLite(ctx, path, SQLiteOptions{Table: "Items"})
	if err != nil {
		t.Fatalf("after dropping the triggers: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	s := newService(t, Config{Store: st, PollInterval: sqlitePoll})
	if code, body, _ := do(s.Handler(), "PUT", "new", "v"); code != 201 {
		t.Errorf("PUT: %d %q; want 201", code, body)
	}
	sqliteExec(t, db, `INSERT INTO Items VALUES ('around', 'x')`)
	waitFor(t, sqlitePoll+applySlack, "accepts a row written around it", func() bool { return s.MayContain("around") })
}

// sqliteItemsGuarded returns a new database file whose table items an
// instance has guarded (and closed), and a connection of its own to it.
func sqliteItemsGuarded(t *testing.T) (string, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.db")
	st, err := OpenSQLite(context.Background(), path, SQLiteOptions{Table: "items"})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	return path, sqliteDirect(t, path)
}
