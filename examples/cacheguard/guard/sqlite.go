package guard

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" driver (pure Go)
)

// SQLite is a Store in an SQLite file (pure-Go driver modernc.org/sqlite), for
// one service instance. Writers take the database lock at BEGIN (IMMEDIATE),
// so write transactions run one at a time; readers run beside them (WAL).
type SQLite struct {
	db *sql.DB
}

// OpenSQLite opens (creating if needed) the database file at path.
func OpenSQLite(ctx context.Context, path string) (*SQLite, error) {
	if path == "" {
		return nil, errors.New("cacheguard: empty SQLite path")
	}
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("cacheguard: open SQLite %s: %w", path, err)
	}
	db.SetMaxOpenConns(8)
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS items (k TEXT PRIMARY KEY, v BLOB NOT NULL)`); err != nil {
		db.Close()
		return nil, fmt.Errorf("cacheguard: SQLite %s: create table: %w", path, err)
	}
	return &SQLite{db: db}, nil
}

// Backend returns "sqlite".
func (s *SQLite) Backend() string { return "sqlite" }

// Ping checks the database.
func (s *SQLite) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Close closes the database.
func (s *SQLite) Close() error { return s.db.Close() }

// Get reads one row.
func (s *SQLite) Get(ctx context.Context, key string) ([]byte, bool, error) {
	var v []byte
	err := s.db.QueryRowContext(ctx, `SELECT v FROM items WHERE k = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("cacheguard: sqlite get: %w", err)
	}
	return v, true, nil
}

// failBeforeCommit, when set by a test, makes Put fail after created().
var failBeforeCommit func(key string) error

// Put inserts or updates a row; see Store.
func (s *SQLite) Put(ctx context.Context, key string, val []byte, created func() error) (bool, Outcome, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, NotCommitted, fmt.Errorf("cacheguard: sqlite put: begin: %w", err)
	}
	defer tx.Rollback() // no-op after Commit
	res, err := tx.ExecContext(ctx, `INSERT INTO items (k, v) VALUES (?, ?) ON CONFLICT (k) DO NOTHING`, key, val)
	if err != nil {
		return false, NotCommitted, fmt.Errorf("cacheguard: sqlite put: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, NotCommitted, fmt.Errorf("cacheguard: sqlite put: %w", err)
	}
	isNew := n == 1
	if isNew {
		if err := created(); err != nil {
			return true, NotCommitted, err
		}
		if failBeforeCommit != nil {
			if err := failBeforeCommit(key); err != nil {
				return true, NotCommitted, err
			}
		}
	} else if _, err := tx.ExecContext(ctx, `UPDATE items SET v = ? WHERE k = ?`, val, key); err != nil {
		return false, NotCommitted, fmt.Errorf("cacheguard: sqlite put: %w", err)
	}
	if err := tx.Commit(); err != nil {
		// An embedded database has no lost answers: a failed COMMIT
		// left the transaction uncommitted, and the deferred Rollback
		// ends it.
		return isNew, NotCommitted, fmt.Errorf("cacheguard: sqlite put: commit: %w", err)
	}
	return isNew, NotCommitted, nil
}

// Delete removes a row; see Store.
func (s *SQLite) Delete(ctx context.Context, key string) (bool, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM items WHERE k = ?`, key)
	if err != nil {
		return false, fmt.Errorf("cacheguard: sqlite delete: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("cacheguard: sqlite delete: %w", err)
	}
	return n == 1, nil
}

// ScanKeys reads all keys in one read transaction; see Store.
func (s *SQLite) ScanKeys(ctx context.Context, fn func(total int64, keys []string) error) (int64, error) {
	// A read-only transaction sees one snapshot; the immediate lock is
	// taken by _txlock for every BeginTx, which here also keeps writers
	// out for the length of the scan (the service is not serving yet).
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return 0, fmt.Errorf("cacheguard: sqlite scan: %w", err)
	}
	defer tx.Rollback()
	var total int64
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM items`).Scan(&total); err != nil {
		return 0, fmt.Errorf("cacheguard: sqlite scan: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT k FROM items`)
	if err != nil {
		return 0, fmt.Errorf("cacheguard: sqlite scan: %w", err)
	}
	defer rows.Close()
	batch := make([]string, 0, scanBatch)
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return 0, fmt.Errorf("cacheguard: sqlite scan: %w", err)
		}
		if batch = append(batch, k); len(batch) == scanBatch {
			if err := fn(total, batch); err != nil {
				return 0, err
			}
			batch = batch[:0]
		}
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("cacheguard: sqlite scan: %w", err)
	}
	if len(batch) > 0 {
		if err := fn(total, batch); err != nil {
			return 0, err
		}
	}
	return 0, nil
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
		rows, err := s.db.QueryContext(ctx, `SELECT k FROM items WHERE k IN (?`+strings.Repeat(",?", n-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("cacheguard: sqlite existing: %w", err)
		}
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				rows.Close()
				return nil, fmt.Errorf("cacheguard: sqlite existing: %w", err)
			}
			out = append(out, k)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("cacheguard: sqlite existing: %w", err)
		}
		keys = keys[n:]
	}
	return out, nil
}

// Seed inserts n rows with keys prefix+index (index 0..n-1) and a small value,
// skipping those that exist, in one transaction. It is for tests and the load
// generator and bypasses any running service's filter.
func (s *SQLite) Seed(ctx context.Context, prefix string, n int) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("cacheguard: sqlite seed: %w", err)
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, `INSERT INTO items (k, v) VALUES (?, ?) ON CONFLICT (k) DO NOTHING`)
	if err != nil {
		return fmt.Errorf("cacheguard: sqlite seed: %w", err)
	}
	defer st.Close()
	for i := range n {
		k := SeedKey(prefix, i)
		if _, err := st.ExecContext(ctx, k, []byte("v:"+k)); err != nil {
			return fmt.Errorf("cacheguard: sqlite seed: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("cacheguard: sqlite seed: %w", err)
	}
	return nil
}

// SeedKey is the i-th key Seed writes with prefix.
func SeedKey(prefix string, i int) string { return fmt.Sprintf("%s%08d", prefix, i) }
