package guard

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver (pure Go)
)

// SQLite is a Store over a table of an SQLite file (pure-Go driver
// modernc.org/sqlite). Writers take the database lock at BEGIN (IMMEDIATE),
// so write transactions run one at a time; readers run beside them (WAL).
//
// What the example owns carries the prefix cacheguard_: the change log
// cacheguard_changes, the list of guarded tables cacheguard_guarded, the
// triggers, and (by default) the guarded table cacheguard_items. Row triggers
// on the guarded table append 'I' and 'D' entries to cacheguard_changes in
// the writing transaction, whichever connection or process writes; the
// service polls the log. Since SQLite commits one write transaction at a
// time, the log commits in seq order.
type SQLite struct {
	db      *sql.DB
	table   string
	guardID string
}

// DefaultSQLiteTable is the guarded table unless -table names another.
const DefaultSQLiteTable = "cacheguard_items"

const sqliteSchema = `
CREATE TABLE IF NOT EXISTS cacheguard_changes (
	seq INTEGER PRIMARY KEY AUTOINCREMENT,
	tbl TEXT NOT NULL,
	op TEXT NOT NULL CHECK (op IN ('I', 'D')),
	k TEXT NOT NULL,
	origin TEXT NOT NULL DEFAULT '',
	at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX IF NOT EXISTS cacheguard_changes_tbl_seq ON cacheguard_changes (tbl, seq);
CREATE TABLE IF NOT EXISTS cacheguard_guarded (
	tbl TEXT PRIMARY KEY,
	guard_id TEXT NOT NULL,
	created_by_cacheguard INTEGER NOT NULL,
	registered_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
);
`

// sqliteTriggers are the guarded table's triggers (%[1]s: the table). The
// UPDATE trigger fires only when the key changes: the old key's row is gone,
// the new key's has appeared.
var sqliteTriggers = []string{
	`CREATE TRIGGER IF NOT EXISTS cacheguard_insert_%[1]s AFTER INSERT ON %[1]s BEGIN
		INSERT INTO cacheguard_changes (tbl, op, k) VALUES ('%[1]s', 'I', NEW.k);
	END`,
	`CREATE TRIGGER IF NOT EXISTS cacheguard_delete_%[1]s AFTER DELETE ON %[1]s BEGIN
		INSERT INTO cacheguard_changes (tbl, op, k) VALUES ('%[1]s', 'D', OLD.k);
	END`,
	`CREATE TRIGGER IF NOT EXISTS cacheguard_update_%[1]s AFTER UPDATE OF k ON %[1]s WHEN OLD.k IS NOT NEW.k BEGIN
		INSERT INTO cacheguard_changes (tbl, op, k) VALUES ('%[1]s', 'D', OLD.k);
		INSERT INTO cacheguard_changes (tbl, op, k) VALUES ('%[1]s', 'I', NEW.k);
	END`,
}

// SQLiteOptions configures OpenSQLite.
type SQLiteOptions struct {
	// Table is the guarded table, with the columns k TEXT (unique) and
	// v BLOB; "" means DefaultSQLiteTable. A table that does not exist is
	// created (and only such a table may be emptied by Reset).
	Table string
}

// OpenSQLite opens (creating if needed) the database file at path and guards
// the table: creates it if missing (recording that cacheguard owns it),
// installs the triggers.
func OpenSQLite(ctx context.Context, path string, opt SQLiteOptions) (*SQLite, error) {
	if path == "" {
		return nil, errors.New("empty SQLite path")
	}
	table := opt.Table
	if table == "" {
		table = DefaultSQLiteTable
	}
	if !tableName.MatchString(table) || strings.Contains(table, ".") {
		return nil, fmt.Errorf("SQLite table name %q: want letters, digits and _", table)
	}
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+sqliteURIPath(path)+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open SQLite %s: %w", path, err)
	}
	db.SetMaxOpenConns(8)
	s := &SQLite{db: db, table: table}
	if err := s.register(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("SQLite %s: %w", path, err)
	}
	return s, nil
}

// sqliteURIPath escapes path for a "file:" URI: '%', '?' and '#' would
// otherwise start an escape, the query or a fragment, and another file
// would be opened ("shop#2.db" as "shop").
func sqliteURIPath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

func (s *SQLite) register(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, sqliteSchema); err != nil {
		return fmt.Errorf("create the cacheguard tables: %w", err)
	}
	// SQLite's names are case-insensitive: -table Items names a table
	// made as items. The name is taken as the table has it, which is how
	// its triggers (made under that name) log it, unless the table was
	// renamed with a change of case since (triggersOn refuses that).
	var stored string
	err = tx.QueryRowContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name = ? COLLATE NOCASE`, s.table).Scan(&stored)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	createdNow := stored == ""
	if !createdNow {
		s.table = stored
	}
	if createdNow {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE `+s.table+` (k TEXT PRIMARY KEY, v BLOB NOT NULL)`); err != nil {
			return fmt.Errorf("create table %s: %w", s.table, err)
		}
	}
	var cols int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info(?) WHERE name IN ('k', 'v')`, s.table).Scan(&cols); err != nil {
		return err
	}
	if cols != 2 {
		return fmt.Errorf("table %s: want the columns k TEXT (unique) and v BLOB", s.table)
	}
	// k must be unique on its own (PRIMARY KEY or UNIQUE, not partial):
	// a PUT's upsert needs the conflict target, and the change log counts
	// one row per key.
	var unique int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pragma_index_list(?1) AS il
		WHERE il."unique" = 1 AND il.partial = 0
		AND (SELECT count(*) FROM pragma_index_info(il.name)) = 1
		AND (SELECT name FROM pragma_index_info(il.name)) = 'k'`, s.table).Scan(&unique); err != nil {
		return err
	}
	if unique == 0 {
		return fmt.Errorf("table %s: column k has no unique index of its own (want k TEXT PRIMARY KEY or UNIQUE)", s.table)
	}
	if err := sqliteKeyIsBytes(ctx, tx, s.table); err != nil {
		return err
	}
	// The registration is this table's only while all of cacheguard's
	// triggers are on it: a table dropped and created again under the
	// name, by anyone, has none (they went with the old one), and one
	// whose triggers were dropped had writes that were not logged. Such a
	// table gets a new identity (no snapshot of the old one loads), owned
	// only if created just now.
	have, err := s.triggersOn(ctx, tx)
	if err != nil {
		return err
	}
	register := `INSERT INTO cacheguard_guarded (tbl, guard_id, created_by_cacheguard) VALUES (?, ?, ?) ON CONFLICT (tbl) DO NOTHING`
	if createdNow || have < len(sqliteTriggers) {
		register = `INSERT INTO cacheguard_guarded (tbl, guard_id, created_by_cacheguard) VALUES (?, ?, ?) ON CONFLICT (tbl) DO UPDATE
			SET guard_id = excluded.guard_id, created_by_cacheguard = excluded.created_by_cacheguard, registered_at = CURRENT_TIMESTAMP`
	}
	if _, err := tx.ExecContext(ctx, register, s.table, randomID(), createdNow); err != nil {
		return err
	}
	if err := tx.QueryRowContext(ctx, `SELECT guard_id FROM cacheguard_guarded WHERE tbl = ?`, s.table).Scan(&s.guardID); err != nil {
		return err
	}
	for _, tr := range sqliteTriggers {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(tr, s.table)); err != nil {
			return fmt.Errorf("create trigger on %s: %w", s.table, err)
		}
	}
	return tx.Commit()
}

// sqliteKeyIsBytes checks that the table compares keys as the filter does,
// byte for byte: k has TEXT affinity (an INTEGER or NUMERIC column stores
// '042' as 42, which a GET of "042" finds while the filter, given "042",
// holds "42"), its collation is BINARY (under NOCASE or RTRIM the database
// finds "Alice" for a GET of "alice", which the filter rejects), and so is
// that of every unique index on k (the upsert's conflict target). Other
// indexes do not change what k = ? finds, so they may have any collation.
func sqliteKeyIsBytes(ctx context.Context, tx *sql.Tx, table string) error {
	var decl string
	if err := tx.QueryRowContext(ctx, `SELECT type FROM pragma_table_info(?) WHERE name = 'k'`, table).Scan(&decl); err != nil {
		return err
	}
	if d := strings.ToUpper(decl); strings.Contains(d, "INT") || !strings.Contains(d, "CHAR") && !strings.Contains(d, "CLOB") && !strings.Contains(d, "TEXT") {
		return fmt.Errorf("table %s: column k is declared %q, without TEXT affinity: the database would compare keys as numbers or blobs where the filter compares bytes (want k TEXT)", table, decl)
	}
	// A compound SELECT's column takes the collation of its left-most
	// SELECT's: k's, even with no row of the table read.
	var folded int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT k FROM `+table+` WHERE 0 UNION ALL SELECT 'A' UNION ALL SELECT 'b ') AS s
		WHERE s.k = 'a' OR s.k = 'b'`).Scan(&folded); err != nil {
		return err
	}
	var other int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pragma_index_list(?1) AS il, pragma_index_xinfo(il.name) AS x
		WHERE il."unique" = 1 AND x.key = 1 AND x.name = 'k' AND x.coll <> 'BINARY' COLLATE NOCASE`, table).Scan(&other); err != nil {
		return err
	}
	if folded != 0 || other != 0 {
		return fmt.Errorf("table %s: column k or a unique index on it has a collation other than BINARY: the database would take keys that differ in bytes for one key, the filter would not (want k TEXT with the default collation)", table)
	}
	return nil
}

// sqliteTriggerNames are the names of the triggers sqliteTriggers create,
// without the table's name.
var sqliteTriggerNames = []string{"cacheguard_insert_", "cacheguard_delete_", "cacheguard_update_"}

// triggersOn counts cacheguard's triggers on the table. One of them on
// another table (the table was renamed and another one took its name; its
// entries would still carry this name) is an error, and so is one that logs
// the table under another spelling (the table was renamed with a change of
// case: the trigger's text keeps the old name, and the log would be read
// under the new one, which matches none of its entries).
func (s *SQLite) triggersOn(ctx context.Context, tx *sql.Tx) (int, error) {
	n := 0
	for _, prefix := range sqliteTriggerNames {
		var on, text string
		err := tx.QueryRowContext(ctx, `SELECT tbl_name, sql FROM sqlite_schema WHERE type = 'trigger' AND name = ? COLLATE NOCASE`, prefix+s.table).Scan(&on, &text)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if !strings.EqualFold(on, s.table) {
			return 0, fmt.Errorf("trigger %s%s is on table %s, not %s (renamed?): its entries would be taken for %s's; drop it", prefix, s.table, on, s.table, s.table)
		}
		if !strings.Contains(text, "VALUES ('"+s.table+"', ") {
			return 0, fmt.Errorf("trigger %s%s logs table %s under another spelling (renamed with a change of case?): its entries would not be read; drop cacheguard's three triggers on it and start again (the table gets a new identity and is scanned, and is no longer marked as created by cacheguard)", prefix, s.table, s.table)
		}
		n++
	}
	return n, nil
}

// Backend returns "sqlite".
func (s *SQLite) Backend() string { return "sqlite" }

// Table returns the guarded table's name.
func (s *SQLite) Table() string { return s.table }

// Ping checks the database.
func (s *SQLite) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Close closes the database.
func (s *SQLite) Close() error { return s.db.Close() }

// GuardID returns the guarded table's identity.
func (s *SQLite) GuardID() string { return s.guardID }

// Get reads one row.
func (s *SQLite) Get(ctx context.Context, key string) ([]byte, bool, error) {
	var v []byte
	err := s.db.QueryRowContext(ctx, `SELECT v FROM `+s.table+` WHERE k = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("sqlite get: %w", err)
	}
	return v, true, nil
}

// failBeforeCommit, when set by a test, makes Put fail after created().
var failBeforeCommit func(key string) error

// Put inserts or updates a row; see Store. The trigger writes the new row's
// 'I' entry; Put gives it the caller's origin in the same transaction. The
// transaction takes the write lock at BEGIN (_txlock=immediate), so the
// log's entries up to its maximum then are final, and the ones after it
// are the transaction's own: the row's 'I' is the last 'I' of the key
// among them.
func (s *SQLite) Put(ctx context.Context, key string, val []byte, origin string, created func(Creation) error) (bool, Outcome, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, NotCommitted, fmt.Errorf("sqlite put: begin: %w", err)
	}
	defer tx.Rollback() // no-op after Commit
	var before int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM cacheguard_changes`).Scan(&before); err != nil {
		return false, NotCommitted, fmt.Errorf("sqlite put: %w", err)
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO `+s.table+` (k, v) VALUES (?, ?) ON CONFLICT (k) DO NOTHING`, key, val)
	if err != nil {
		return false, NotCommitted, fmt.Errorf("sqlite put: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, NotCommitted, fmt.Errorf("sqlite put: %w", err)
	}
	isNew := n == 1
	if isNew {
		var seq int64
		err := tx.QueryRowContext(ctx, `UPDATE cacheguard_changes SET origin = ?1
			WHERE seq = (SELECT max(seq) FROM cacheguard_changes WHERE seq > ?4 AND tbl = ?2 AND op = 'I' AND k = ?3) RETURNING seq`,
			origin, s.table, key, before).Scan(&seq)
		if errors.Is(err, sql.ErrNoRows) {
			return true, NotCommitted, fmt.Errorf("sqlite put: no change-log entry for the new row: are the triggers on %s missing?", s.table)
		}
		if err != nil {
			return true, NotCommitted, fmt.Errorf("sqlite put: %w", err)
		}
		// SQLite's triggers cannot change NEW.k: the row holds key (a
		// trigger that renamed it afterwards logged its 'D', which the
		// follower applies after the commit).
		if err := created(Creation{Key: key, Seq: seq, First: before + 1, Log: &sqliteLog{q: tx, table: s.table}}); err != nil {
			return true, NotCommitted, err
		}
		if failBeforeCommit != nil {
			if err := failBeforeCommit(key); err != nil {
				return true, NotCommitted, err
			}
		}
	} else if _, err := tx.ExecContext(ctx, `UPDATE `+s.table+` SET v = ? WHERE k = ?`, val, key); err != nil {
		return false, NotCommitted, fmt.Errorf("sqlite put: %w", err)
	}
	if err := tx.Commit(); err != nil {
		// An embedded database has no lost answers: a failed COMMIT
		// left the transaction uncommitted, and the deferred Rollback
		// ends it.
		return isNew, NotCommitted, fmt.Errorf("sqlite put: commit: %w", err)
	}
	return isNew, NotCommitted, nil
}

// Delete removes a row; see Store. The trigger logs the 'D'.
func (s *SQLite) Delete(ctx context.Context, key string) (bool, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM `+s.table+` WHERE k = ?`, key)
	if err != nil {
		return false, fmt.Errorf("sqlite delete: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("sqlite delete: %w", err)
	}
	return n == 1, nil
}

// Existing returns the keys among keys that have a row.
func (s *SQLite) Existing(ctx context.Context, keys []string) ([]string, error) {
	var out []string
	for len(keys) > 0 {
		n := min(len(keys), 500)
		args := make([]any, n)
		for i, k := range keys[:n] {
			args[i] = k
		}
		rows, err := s.db.QueryContext(ctx, `SELECT k FROM `+s.table+` WHERE k IN (?`+strings.Repeat(",?", n-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("sqlite existing: %w", err)
		}
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				rows.Close()
				return nil, fmt.Errorf("sqlite existing: %w", err)
			}
			out = append(out, k)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("sqlite existing: %w", err)
		}
		keys = keys[n:]
	}
	return out, nil
}

// Seed inserts n rows with keys SeedKey(prefix, 0..n-1) and a small value,
// skipping those that exist, in one transaction (the triggers log them).
func (s *SQLite) Seed(ctx context.Context, prefix string, n int) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite seed: %w", err)
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, `INSERT INTO `+s.table+` (k, v) VALUES (?, ?) ON CONFLICT (k) DO NOTHING`)
	if err != nil {
		return fmt.Errorf("sqlite seed: %w", err)
	}
	defer st.Close()
	for i := range n {
		k := SeedKey(prefix, i)
		if _, err := st.ExecContext(ctx, k, []byte("v:"+k)); err != nil {
			return fmt.Errorf("sqlite seed: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite seed: %w", err)
	}
	return nil
}

// Reset empties the guarded table and its change-log entries and renews its
// GuardID, but only if cacheguard created the table (ErrNotOwned otherwise,
// with nothing changed).
func (s *SQLite) Reset(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite reset: %w", err)
	}
	defer tx.Rollback()
	// The marker holds for the table with cacheguard's triggers on it
	// (see register): a table dropped and created again since Open has
	// none. The transaction holds the write lock: the schema cannot
	// change under it.
	var owned bool
	err = tx.QueryRowContext(ctx, `SELECT created_by_cacheguard FROM cacheguard_guarded WHERE tbl = ?`, s.table).Scan(&owned)
	if err == nil && owned {
		var have int
		if have, err = s.triggersOn(ctx, tx); err == nil && have < len(sqliteTriggers) {
			owned = false
		}
	}
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !owned) {
		return fmt.Errorf("sqlite reset: %w: %s", ErrNotOwned, s.table)
	}
	if err != nil {
		return fmt.Errorf("sqlite reset: %w", err)
	}
	id := randomID()
	if _, err := tx.ExecContext(ctx, `DELETE FROM `+s.table); err != nil {
		return fmt.Errorf("sqlite reset: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM cacheguard_changes WHERE tbl = ?`, s.table); err != nil {
		return fmt.Errorf("sqlite reset: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE cacheguard_guarded SET guard_id = ? WHERE tbl = ?`, id, s.table); err != nil {
		return fmt.Errorf("sqlite reset: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite reset: %w", err)
	}
	s.guardID = id
	return nil
}

// LogBounds returns the lowest and highest seq in the change log (0, 0 when
// it is empty).
func (s *SQLite) LogBounds(ctx context.Context) (lo, hi int64, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT coalesce(min(seq), 0), coalesce(max(seq), 0) FROM cacheguard_changes`).Scan(&lo, &hi)
	if err != nil {
		return 0, 0, fmt.Errorf("sqlite log bounds: %w", err)
	}
	return lo, hi, nil
}

// sqliteLog reads the log through a connection or a transaction.
type sqliteLog struct {
	q interface {
		QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	}
	table string
}

// Changes reads the entries in one statement; see LogReader.
func (r *sqliteLog) Changes(ctx context.Context, after, before int64, fn func(Change) error) error {
	rows, err := r.q.QueryContext(ctx, `SELECT seq, op, k, origin, at FROM cacheguard_changes WHERE tbl = ? AND seq > ? AND seq < ? ORDER BY seq`, r.table, after, before)
	if err != nil {
		return fmt.Errorf("sqlite changes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var c Change
		var op, at string
		if err := rows.Scan(&c.Seq, &op, &c.Key, &c.Origin, &at); err != nil {
			return fmt.Errorf("sqlite changes: %w", err)
		}
		c.Op = op[0]
		c.At, _ = time.Parse("2006-01-02T15:04:05.999Z", at)
		if err := fn(c); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite changes: %w", err)
	}
	return nil
}

// sqliteConn is a Conn on a connection of the pool.
type sqliteConn struct {
	sqliteLog
	c *sql.Conn
}

// Conn takes a connection from the pool.
func (s *SQLite) Conn(ctx context.Context) (Conn, error) {
	c, err := s.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return &sqliteConn{sqliteLog: sqliteLog{q: c, table: s.table}, c: c}, nil
}

func (c *sqliteConn) Release() { c.c.Close() }

// Entry identifies the entry seq; see Conn.
func (c *sqliteConn) Entry(ctx context.Context, seq int64) (string, error) {
	var id string
	err := c.c.QueryRowContext(ctx, `SELECT tbl || ' ' || op || ' ' || at || ' ' || k FROM cacheguard_changes WHERE seq = ?`, seq).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("sqlite change %d: %w", seq, err)
	}
	return id, nil
}

// ScanKeys reads all keys in one transaction, with the highest log seq of
// that snapshot; see Conn. The transaction is read-only, which the driver
// begins without _txlock's immediate lock: in WAL mode its first read fixes
// the snapshot that the count, the log's maximum and the keys all come
// from, while writers go on.
func (c *sqliteConn) ScanKeys(ctx context.Context, fn func(total int64, keys []string) error) (int64, error) {
	tx, err := c.c.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return 0, fmt.Errorf("sqlite scan: %w", err)
	}
	defer tx.Rollback()
	var total, seq int64
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM `+c.table+`), (SELECT coalesce(max(seq), 0) FROM cacheguard_changes)`).Scan(&total, &seq); err != nil {
		return 0, fmt.Errorf("sqlite scan: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT k FROM `+c.table)
	if err != nil {
		return 0, fmt.Errorf("sqlite scan: %w", err)
	}
	defer rows.Close()
	batch := make([]string, 0, scanBatch)
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return 0, fmt.Errorf("sqlite scan: %w", err)
		}
		if batch = append(batch, k); len(batch) == scanBatch {
			if err := fn(total, batch); err != nil {
				return 0, err
			}
			batch = batch[:0]
		}
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("sqlite scan: %w", err)
	}
	if len(batch) > 0 {
		if err := fn(total, batch); err != nil {
			return 0, err
		}
	}
	return seq, nil
}
