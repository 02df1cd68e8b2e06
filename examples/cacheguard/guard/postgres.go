package guard

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Postgres is a Store in a PostgreSQL database that several service
// instances share. Besides the items table it keeps a change log,
// cacheguard_changes (seq, op, k, origin): every transaction that creates or
// deletes a row appends one entry in the same transaction and sends a
// notification on the channel NotifyChannel (delivered at commit), so each
// instance can apply the other instances' changes to its filter (Feed).
//
// Sequence numbers are taken under a transaction-scoped advisory lock held to
// the commit, so the log commits in sequence order: once entry s is visible,
// every entry below s is visible or was rolled back for good. A reader can
// therefore apply the log by reading "seq > last applied" without ever
// skipping an entry that commits late. The cost is that creating and deleting
// transactions commit one at a time across all instances (updates of
// existing rows do not take the lock).
type Postgres struct {
	pool   *pgxpool.Pool
	dsn    string
	origin string
}

// NotifyChannel is the PostgreSQL notification channel of the change log.
const NotifyChannel = "cacheguard_changes"

// logLock is the advisory lock key that orders the change log.
const logLock = 0x6361636865 // "cache"

const pgSchema = `
CREATE TABLE IF NOT EXISTS items (k text PRIMARY KEY, v bytea NOT NULL);
CREATE TABLE IF NOT EXISTS cacheguard_changes (
	seq bigserial PRIMARY KEY,
	op char(1) NOT NULL CHECK (op IN ('I', 'D')),
	k text NOT NULL,
	origin text NOT NULL,
	at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE TABLE IF NOT EXISTS cacheguard_meta (one int PRIMARY KEY CHECK (one = 1), db_id text NOT NULL);
INSERT INTO cacheguard_meta (one, db_id) VALUES (1, md5(random()::text || clock_timestamp()::text)) ON CONFLICT DO NOTHING;
`

// OpenPostgres connects to the database at dsn (a postgres:// URL or a
// key=value string) and creates the tables if needed. Each call gets a new
// random origin, the name its change-log entries carry.
func OpenPostgres(ctx context.Context, dsn string) (*Postgres, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("cacheguard: bad PostgreSQL DSN: %w", err)
	}
	cfg.MaxConns = 16
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("cacheguard: PostgreSQL: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("cacheguard: PostgreSQL unreachable: %w", err)
	}
	// Two instances starting at once may race on CREATE TABLE IF NOT
	// EXISTS; an advisory lock makes the schema step one at a time.
	if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, logLock+1); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, pgSchema)
		return err
	}); err != nil {
		pool.Close()
		return nil, fmt.Errorf("cacheguard: PostgreSQL: create tables: %w", err)
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		pool.Close()
		return nil, fmt.Errorf("cacheguard: origin: %w", err)
	}
	return &Postgres{pool: pool, dsn: dsn, origin: hex.EncodeToString(b[:])}, nil
}

// Backend returns "postgres".
func (p *Postgres) Backend() string { return "postgres" }

// Ping checks the database.
func (p *Postgres) Ping(ctx context.Context) error { return p.pool.Ping(ctx) }

// Close closes the connection pool.
func (p *Postgres) Close() error { p.pool.Close(); return nil }

// Origin returns the name this store's change-log entries carry.
func (p *Postgres) Origin() string { return p.origin }

// Get reads one row.
func (p *Postgres) Get(ctx context.Context, key string) ([]byte, bool, error) {
	var v []byte
	err := p.pool.QueryRow(ctx, `SELECT v FROM items WHERE k = $1`, key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("cacheguard: postgres get: %w", err)
	}
	return v, true, nil
}

// logChange appends a change-log entry and its notification inside tx and
// returns the entry's seq. tx holds the log lock from here to its end.
func (p *Postgres) logChange(ctx context.Context, tx pgx.Tx, op, key string) (int64, error) {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, logLock); err != nil {
		return 0, err
	}
	var seq int64
	if err := tx.QueryRow(ctx, `INSERT INTO cacheguard_changes (op, k, origin) VALUES ($1, $2, $3) RETURNING seq`, op, key, p.origin).Scan(&seq); err != nil {
		return 0, err
	}
	_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, NotifyChannel, strconv.FormatInt(seq, 10))
	return seq, err
}

// commitOutcome classifies a failed COMMIT: an error the server sent
// (serialization failure, constraint) or one raised before anything was sent
// means the transaction did not commit; any other (a broken connection after
// the COMMIT went out) leaves it unknown.
func commitOutcome(err error) Outcome {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) || pgconn.SafeToRetry(err) {
		return NotCommitted
	}
	return MaybeCommitted
}

// Put inserts or updates a row; see Store.
func (p *Postgres) Put(ctx context.Context, key string, val []byte, created func() error) (bool, Outcome, error) {
	return p.PutLogged(ctx, key, val, func(int64, *LogReader) error { return created() })
}

// PutLogged is Put, except that created also receives the seq of the row's
// change-log entry and a LogReader on the transaction. created runs while
// the transaction holds the log lock, so every entry below seq has committed
// or rolled back for good and no entry above it exists yet: reading the log
// through the reader up to seq sees exactly the changes before this
// creation. The reader needs no connection of its own (one taken from the
// pool there could wait for connections held by transactions queued behind
// the log lock).
func (p *Postgres) PutLogged(ctx context.Context, key string, val []byte, created func(seq int64, log *LogReader) error) (bool, Outcome, error) {
	tx, err := p.pool.Begin(ctx)
	if err != nil {
		return false, NotCommitted, fmt.Errorf("cacheguard: postgres put: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) // no-op after Commit
	// xmax = 0 holds for a row version this statement inserted, not for
	// one it updated: it tells a created row from an overwritten one. A
	// concurrent Put of the same new key waits here on our row lock and
	// then updates (we committed) or inserts (we rolled back), so exactly
	// one transaction creates each row.
	var isNew bool
	if err := tx.QueryRow(ctx, `INSERT INTO items (k, v) VALUES ($1, $2)
		ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v RETURNING xmax = 0`, key, val).Scan(&isNew); err != nil {
		return false, NotCommitted, fmt.Errorf("cacheguard: postgres put: %w", err)
	}
	if isNew {
		seq, err := p.logChange(ctx, tx, "I", key)
		if err != nil {
			return true, NotCommitted, fmt.Errorf("cacheguard: postgres put: change log: %w", err)
		}
		if err := created(seq, &LogReader{q: tx}); err != nil {
			return true, NotCommitted, err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return isNew, commitOutcome(err), fmt.Errorf("cacheguard: postgres put: commit: %w", err)
	}
	return isNew, NotCommitted, nil
}

// Delete removes a row; see Store.
func (p *Postgres) Delete(ctx context.Context, key string) (bool, error) {
	tx, err := p.pool.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("cacheguard: postgres delete: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	tag, err := tx.Exec(ctx, `DELETE FROM items WHERE k = $1`, key)
	if err != nil {
		return false, fmt.Errorf("cacheguard: postgres delete: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return false, nil
	}
	if _, err := p.logChange(ctx, tx, "D", key); err != nil {
		return false, fmt.Errorf("cacheguard: postgres delete: change log: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return false, fmt.Errorf("cacheguard: postgres delete: commit: %w", err)
	}
	return true, nil
}

// ScanKeys reads all keys in one REPEATABLE READ snapshot and returns the
// highest change-log seq visible in it: by the log's commit order, the scan
// holds exactly the effect of the entries up to that seq.
func (p *Postgres) ScanKeys(ctx context.Context, fn func(total int64, keys []string) error) (int64, error) {
	var seq int64
	err := pgx.BeginTxFunc(ctx, p.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var total int64
		if err := tx.QueryRow(ctx, `SELECT (SELECT coalesce(max(seq), 0) FROM cacheguard_changes), (SELECT count(*) FROM items)`).Scan(&seq, &total); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT k FROM items`)
		if err != nil {
			return err
		}
		defer rows.Close()
		batch := make([]string, 0, scanBatch)
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				return err
			}
			if batch = append(batch, k); len(batch) == scanBatch {
				if err := fn(total, batch); err != nil {
					return err
				}
				batch = batch[:0]
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if len(batch) > 0 {
			return fn(total, batch)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("cacheguard: postgres scan: %w", err)
	}
	return seq, nil
}

// Existing returns the keys among keys that have a row.
func (p *Postgres) Existing(ctx context.Context, keys []string) ([]string, error) {
	var out []string
	for len(keys) > 0 {
		n := min(len(keys), 10000)
		rows, err := p.pool.Query(ctx, `SELECT k FROM items WHERE k = ANY($1)`, keys[:n])
		if err != nil {
			return nil, fmt.Errorf("cacheguard: postgres existing: %w", err)
		}
		got, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return nil, fmt.Errorf("cacheguard: postgres existing: %w", err)
		}
		out = append(out, got...)
		keys = keys[n:]
	}
	return out, nil
}

// Seed inserts n rows with keys SeedKey(prefix, 0..n-1), skipping existing
// ones, without change-log entries: it is for preparing a table before any
// service starts (tests, the load generator).
func (p *Postgres) Seed(ctx context.Context, prefix string, n int) error {
	_, err := p.pool.Exec(ctx, `INSERT INTO items (k, v)
		SELECT $1 || lpad(i::text, 8, '0'), convert_to('v:' || $1 || lpad(i::text, 8, '0'), 'UTF8')
		FROM generate_series(0, $2 - 1) AS i ON CONFLICT (k) DO NOTHING`, prefix, n)
	if err != nil {
		return fmt.Errorf("cacheguard: postgres seed: %w", err)
	}
	return nil
}

// Reset empties the items table and the change log (tests, load generator).
func (p *Postgres) Reset(ctx context.Context) error {
	if _, err := p.pool.Exec(ctx, `TRUNCATE items, cacheguard_changes`); err != nil {
		return fmt.Errorf("cacheguard: postgres reset: %w", err)
	}
	return nil
}

// Change is one change-log entry.
type Change struct {
	Seq    int64
	Op     byte // 'I' created, 'D' deleted
	Key    string
	Origin string
	At     time.Time
}

// DBID returns the random identity stored in the database at creation, which
// snapshots carry so that one is never loaded against another database.
func (p *Postgres) DBID(ctx context.Context) (string, error) {
	var id string
	if err := p.pool.QueryRow(ctx, `SELECT db_id FROM cacheguard_meta`).Scan(&id); err != nil {
		return "", fmt.Errorf("cacheguard: postgres db id: %w", err)
	}
	return id, nil
}

// LogBounds returns the lowest and highest seq in the change log (0, 0 when
// it is empty).
func (p *Postgres) LogBounds(ctx context.Context) (lo, hi int64, err error) {
	err = p.pool.QueryRow(ctx, `SELECT coalesce(min(seq), 0), coalesce(max(seq), 0) FROM cacheguard_changes`).Scan(&lo, &hi)
	if err != nil {
		return 0, 0, fmt.Errorf("cacheguard: postgres log bounds: %w", err)
	}
	return lo, hi, nil
}

// Changes calls fn for the change-log entries after seq `after`, in seq
// order, at most limit of them, and returns the seq of the last one (after
// if none).
func (p *Postgres) Changes(ctx context.Context, after int64, limit int, fn func(Change)) (int64, error) {
	return (&LogReader{q: p.pool}).Changes(ctx, after, math.MaxInt64, limit, fn)
}

// LogReader reads the change log through one connection or transaction.
type LogReader struct {
	q interface {
		Query(context.Context, string, ...any) (pgx.Rows, error)
	}
	release func()
}

// Reader takes a connection from the pool for reading the log; Release
// gives it back.
func (p *Postgres) Reader(ctx context.Context) (*LogReader, error) {
	c, err := p.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("cacheguard: postgres changes: %w", err)
	}
	return &LogReader{q: c, release: c.Release}, nil
}

// Release gives back the reader's connection, if it has one of its own.
func (r *LogReader) Release() {
	if r.release != nil {
		r.release()
	}
}

// Changes is Postgres.Changes restricted to the entries below seq before.
func (r *LogReader) Changes(ctx context.Context, after, before int64, limit int, fn func(Change)) (int64, error) {
	rows, err := r.q.Query(ctx, `SELECT seq, op, k, origin, at FROM cacheguard_changes WHERE seq > $1 AND seq < $2 ORDER BY seq LIMIT $3`, after, before, limit)
	if err != nil {
		return after, fmt.Errorf("cacheguard: postgres changes: %w", err)
	}
	defer rows.Close()
	last := after
	for rows.Next() {
		var c Change
		var op string
		if err := rows.Scan(&c.Seq, &op, &c.Key, &c.Origin, &c.At); err != nil {
			return last, fmt.Errorf("cacheguard: postgres changes: %w", err)
		}
		c.Op = op[0]
		fn(c)
		last = c.Seq
	}
	if err := rows.Err(); err != nil {
		return last, fmt.Errorf("cacheguard: postgres changes: %w", err)
	}
	return last, nil
}

// Listen holds a dedicated connection that LISTENs on NotifyChannel and calls
// wake for every notification, and once after each (re)connection (a
// notification sent while it was not listening is lost; wake lets the caller
// catch up from the log). It returns when ctx is done; connection failures
// are retried every retry interval and reported through onErr.
func (p *Postgres) Listen(ctx context.Context, retry time.Duration, wake func(), onErr func(error)) {
	for ctx.Err() == nil {
		err := p.listenOnce(ctx, wake)
		if ctx.Err() != nil {
			return
		}
		onErr(err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(retry):
		}
	}
}

func (p *Postgres) listenOnce(ctx context.Context, wake func()) error {
	conn, err := pgx.Connect(ctx, p.dsn)
	if err != nil {
		return fmt.Errorf("cacheguard: listen: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, `LISTEN `+NotifyChannel); err != nil {
		return fmt.Errorf("cacheguard: listen: %w", err)
	}
	wake()
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return fmt.Errorf("cacheguard: listen: %w", err)
		}
		wake()
	}
}
