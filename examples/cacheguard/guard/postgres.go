package guard

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Postgres is a Store over a table of a PostgreSQL database that several
// service instances share. Everything the example owns lives in the schema
// cacheguard: the change log cacheguard.changes, the list of guarded tables
// cacheguard.guarded, the trigger functions, and (by default) the guarded
// table cacheguard.items itself.
//
// Statement triggers on the guarded table (AFTER INSERT, UPDATE, DELETE with
// transition tables, and AFTER TRUNCATE) append one entry per row that
// appeared ('I') or disappeared ('D'), or one 'R' for a TRUNCATE, and send a
// notification on NotifyChannel, all in the writing transaction: whoever
// writes (this service, psql, a batch job, COPY), the entries commit if and
// only if the rows do, and the notification is delivered at that commit. An
// UPDATE that changes keys is logged as the old keys' 'D' and the new keys'
// 'I'; one that leaves the keys alone logs nothing.
//
// Sequence numbers are taken under a transaction-scoped advisory lock held to
// the commit, so the log commits in sequence order: once entry s is visible,
// every entry below s is visible or was rolled back for good, and the
// entries of one transaction are consecutive. A reader can therefore apply
// the log by reading "seq > last applied" without ever skipping an entry that
// commits late. The cost: transactions that create or delete rows of the
// guarded table commit one at a time (updates that keep the keys do not take
// the lock).
type Postgres struct {
	pool    *pgxpool.Pool
	dsn     string
	table   string // as given: name or schema.name
	relid   uint32 // the table's oid
	qname   string // the table's schema-qualified name, quoted where needed
	bare    string // its name without the schema, as older versions recorded it
	guardID string
}

// NotifyChannel is the PostgreSQL notification channel of the change log.
const NotifyChannel = "cacheguard_changes"

// DefaultPostgresTable is the guarded table unless -table names another.
const DefaultPostgresTable = "cacheguard.items"

// logLock is the advisory lock key that orders the change log; logLock+1
// makes the schema step one instance at a time.
const logLock = 0x6361636865 // "cache"

var pgSchema = `
CREATE SCHEMA IF NOT EXISTS cacheguard;
CREATE TABLE IF NOT EXISTS cacheguard.changes (
	seq bigserial PRIMARY KEY,
	tbl oid NOT NULL,
	op char(1) NOT NULL CHECK (op IN ('I', 'D', 'R')),
	k text NOT NULL,
	origin text NOT NULL DEFAULT '',
	at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS changes_tbl_seq ON cacheguard.changes (tbl, seq);
CREATE TABLE IF NOT EXISTS cacheguard.guarded (
	tbl oid PRIMARY KEY,
	name text NOT NULL,
	guard_id text NOT NULL,
	created_by_cacheguard boolean NOT NULL,
	registered_at timestamptz NOT NULL DEFAULT now()
);
CREATE OR REPLACE FUNCTION cacheguard.append(rel oid, op char, keys text[]) RETURNS void
LANGUAGE plpgsql AS $f$
DECLARE
	lo bigint;
	hi bigint;
BEGIN
	IF cardinality(keys) = 0 THEN
		RETURN;
	END IF;
	PERFORM pg_advisory_xact_lock(` + strconv.Itoa(logLock) + `);
	WITH ins AS (INSERT INTO cacheguard.changes (tbl, op, k, origin)
		SELECT rel, op, u, coalesce(current_setting('cacheguard.origin', true), '') FROM unnest(keys) AS u RETURNING seq)
	SELECT min(seq), max(seq) INTO lo, hi FROM ins;
	-- The transaction's first entry: entries below it are final while the
	-- lock is held, the ones from it on are this transaction's.
	IF coalesce(current_setting('cacheguard.first', true), '') = '' THEN
		PERFORM set_config('cacheguard.first', lo::text, true);
	END IF;
	PERFORM set_config('cacheguard.seq', hi::text, true);
	PERFORM pg_notify('` + NotifyChannel + `', rel::text);
END
$f$;
CREATE OR REPLACE FUNCTION cacheguard.on_insert() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
	PERFORM cacheguard.append(TG_RELID, 'I', ARRAY(SELECT k FROM new_rows));
	RETURN NULL;
END
$f$;
CREATE OR REPLACE FUNCTION cacheguard.on_delete() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
	PERFORM cacheguard.append(TG_RELID, 'D', ARRAY(SELECT k FROM old_rows));
	RETURN NULL;
END
$f$;
CREATE OR REPLACE FUNCTION cacheguard.on_update() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
	PERFORM cacheguard.append(TG_RELID, 'D', ARRAY(SELECT k FROM old_rows EXCEPT SELECT k FROM new_rows));
	PERFORM cacheguard.append(TG_RELID, 'I', ARRAY(SELECT k FROM new_rows EXCEPT SELECT k FROM old_rows));
	RETURN NULL;
END
$f$;
CREATE OR REPLACE FUNCTION cacheguard.on_truncate() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
	PERFORM cacheguard.append(TG_RELID, 'R', ARRAY['']);
	RETURN NULL;
END
$f$;
`

// pgTriggers are the guarded table's triggers (%s: the table).
var pgTriggers = []struct{ name, def string }{
	{"cacheguard_insert", `AFTER INSERT ON %s REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cacheguard.on_insert()`},
	{"cacheguard_update", `AFTER UPDATE ON %s REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cacheguard.on_update()`},
	{"cacheguard_delete", `AFTER DELETE ON %s REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION cacheguard.on_delete()`},
	{"cacheguard_truncate", `AFTER TRUNCATE ON %s FOR EACH STATEMENT EXECUTE FUNCTION cacheguard.on_truncate()`},
}

// PGOptions configures OpenPostgres.
type PGOptions struct {
	// Table is the guarded table, name or schema.name with the columns
	// k text (unique) and v bytea; "" means DefaultPostgresTable. A table
	// that does not exist is created (and only such a table may be
	// emptied by Reset).
	Table string
}

// OpenPostgres connects to the database at dsn (a postgres:// URL or a
// key=value string), creates the cacheguard schema if needed, and guards the
// table: creates it if missing (recording that cacheguard owns it), checks
// its columns, installs the triggers.
func OpenPostgres(ctx context.Context, dsn string, opt PGOptions) (*Postgres, error) {
	table := opt.Table
	if table == "" {
		table = DefaultPostgresTable
	}
	if !tableName.MatchString(table) {
		return nil, fmt.Errorf("table name %q: want name or schema.name (letters, digits, _)", table)
	}
	if lower := strings.ToLower(table); lower != table {
		// Unquoted, PostgreSQL folds it: Users names users, not the
		// "Users" an ORM may have made, and cacheguard would create
		// and guard an empty users.
		return nil, fmt.Errorf("table name %q: PostgreSQL folds unquoted names to lower case, so this names %s; give it in lower case (tables whose names need quotes are not supported)", table, lower)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("bad PostgreSQL DSN: %w", err)
	}
	cfg.MaxConns = 16
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("PostgreSQL unreachable: %w", err)
	}
	p := &Postgres{pool: pool, dsn: dsn, table: table}
	// Two instances starting at once may race on CREATE ... IF NOT
	// EXISTS; an advisory lock makes the schema step one at a time.
	if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, logLock+1); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, pgSchema); err != nil {
			return fmt.Errorf("create schema cacheguard: %w", err)
		}
		return p.register(ctx, tx)
	}); err != nil {
		pool.Close()
		return nil, fmt.Errorf("PostgreSQL: %w", err)
	}
	return p, nil
}

func randomID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b[:])
}

// register creates the table if missing, checks it, records it in
// cacheguard.guarded and installs the triggers, inside tx.
func (p *Postgres) register(ctx context.Context, tx pgx.Tx) error {
	var relid *uint32
	if err := tx.QueryRow(ctx, `SELECT to_regclass($1)::oid`, p.table).Scan(&relid); err != nil {
		return err
	}
	createdNow := relid == nil
	if createdNow {
		if _, err := tx.Exec(ctx, `CREATE TABLE `+p.table+` (k text PRIMARY KEY, v bytea NOT NULL)`); err != nil {
			return fmt.Errorf("create table %s: %w", p.table, err)
		}
		if err := tx.QueryRow(ctx, `SELECT to_regclass($1)::oid`, p.table).Scan(&relid); err != nil {
			return err
		}
	}
	p.relid = *relid
	// Qualified whatever the session's search_path (regclass::text
	// leaves out a schema on the path: instances with different paths
	// would record different names, each taking the other's for a
	// rename). bare is the name as regclass::text printed it for a table
	// on the path, which older versions recorded.
	if err := tx.QueryRow(ctx, `SELECT format('%I.%I', n.nspname, c.relname), format('%I', c.relname)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = $1`, p.relid).Scan(&p.qname, &p.bare); err != nil {
		return err
	}
	// The columns: k text with a unique index of its own, v bytea.
	var kType, vType *string
	var kUnique bool
	if err := tx.QueryRow(ctx, `SELECT
		(SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = $1 AND attname = 'k' AND NOT attisdropped),
		(SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = $1 AND attname = 'v' AND NOT attisdropped),
		EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
			WHERE i.indrelid = $1 AND i.indisunique AND i.indnkeyatts = 1 AND i.indpred IS NULL AND a.attname = 'k')`,
		p.relid).Scan(&kType, &vType, &kUnique); err != nil {
		return err
	}
	if kType == nil || *kType != "text" || vType == nil || *vType != "bytea" || !kUnique {
		return fmt.Errorf("table %s: want the columns k text (unique) and v bytea", p.qname)
	}
	// Keys compared byte for byte, as the filter compares them: k's
	// collation and that of every unique index on k (the upsert's
	// conflict target; other indexes do not change what k = $1 finds)
	// deterministic (a
	// non-deterministic one, such as a case-insensitive ICU collation,
	// finds "Alice" for a GET of "alice", which the filter rejects).
	var folding bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_attribute a JOIN pg_collation c ON c.oid = a.attcollation
			WHERE a.attrelid = $1 AND a.attname = 'k' AND NOT c.collisdeterministic)
		OR EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attname = 'k'
			JOIN LATERAL generate_subscripts(i.indkey, 1) AS n ON i.indkey[n] = a.attnum
			JOIN pg_collation c ON c.oid = i.indcollation[n]
			WHERE i.indrelid = $1 AND i.indisunique AND NOT c.collisdeterministic)`, p.relid).Scan(&folding); err != nil {
		return err
	}
	if folding {
		return fmt.Errorf("table %s: column k or a unique index on it has a non-deterministic collation: the database would take keys that differ in bytes for one key, the filter would not (want k text with a deterministic collation)", p.qname)
	}
	// A plain table outside any inheritance tree: statement triggers fire
	// only for the table a statement names, so rows written through a
	// partition or child (which SELECTs on the parent read) or through a
	// parent (which may write this table's rows) would not be logged.
	var relkind string
	var inTree bool
	if err := tx.QueryRow(ctx, `SELECT relkind::text, relispartition OR EXISTS (SELECT 1 FROM pg_inherits WHERE inhrelid = $1 OR inhparent = $1)
		FROM pg_class WHERE oid = $1`, p.relid).Scan(&relkind, &inTree); err != nil {
		return err
	}
	if relkind != "r" || inTree {
		return fmt.Errorf("table %s: partitioned, a partition, or in an inheritance tree: rows written through another table of the tree would not reach the change log; guard a plain table", p.qname)
	}
	// No logical-replication subscription writes the table: its apply
	// worker fires row triggers only, never these statement triggers, so
	// the rows it applies would not be logged. (A subscription added
	// later is not seen; README.)
	var subscribed bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_subscription_rel WHERE srrelid = $1)`, p.relid).Scan(&subscribed); err != nil {
		return err
	}
	if subscribed {
		return fmt.Errorf("table %s: a logical-replication subscription writes it, and its apply worker fires no statement triggers: replicated rows would not reach the change log; guard the publisher's table instead", p.qname)
	}
	// A registration left by a dropped table whose oid was reused, or by
	// a renamed table, does not carry over: a table created just now, or
	// one under another name, gets a new identity, owned only if created
	// here.
	// (A recorded name that is bare is the same name, recorded by an
	// older version: it keeps the identity and stays as it is, so that
	// instances of that version, still running in a rolling upgrade, do
	// not take the qualified name for a rename.)
	if _, err := tx.Exec(ctx, `INSERT INTO cacheguard.guarded AS g (tbl, name, guard_id, created_by_cacheguard)
		VALUES ($1, $2, $3, $4) ON CONFLICT (tbl) DO UPDATE
		SET name = CASE WHEN g.name = $5::text THEN g.name ELSE EXCLUDED.name END,
			guard_id = CASE WHEN EXCLUDED.created_by_cacheguard OR g.name NOT IN (EXCLUDED.name, $5::text)
				THEN EXCLUDED.guard_id ELSE g.guard_id END,
			created_by_cacheguard = CASE WHEN EXCLUDED.created_by_cacheguard OR g.name NOT IN (EXCLUDED.name, $5::text)
				THEN EXCLUDED.created_by_cacheguard ELSE g.created_by_cacheguard END`,
		p.relid, p.qname, randomID(), createdNow, p.bare); err != nil {
		return err
	}
	if err := tx.QueryRow(ctx, `SELECT guard_id FROM cacheguard.guarded WHERE tbl = $1`, p.relid).Scan(&p.guardID); err != nil {
		return err
	}
	for _, tr := range pgTriggers {
		var enabled *string
		if err := tx.QueryRow(ctx, `SELECT tgenabled::text FROM pg_trigger WHERE tgrelid = $1 AND tgname = $2`, p.relid, tr.name).Scan(&enabled); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		switch {
		case enabled == nil:
			if _, err := tx.Exec(ctx, `CREATE TRIGGER `+tr.name+` `+fmt.Sprintf(tr.def, p.qname)); err != nil {
				return fmt.Errorf("create trigger %s on %s: %w", tr.name, p.qname, err)
			}
			// ALWAYS: also in sessions with session_replication_role
			// = replica. (Not for a logical-replication subscriber's
			// apply worker: it fires row triggers only, never these
			// statement triggers; README.)
			if _, err := tx.Exec(ctx, `ALTER TABLE `+p.qname+` ENABLE ALWAYS TRIGGER `+tr.name); err != nil {
				return err
			}
		case *enabled == "D" || *enabled == "R":
			return fmt.Errorf("trigger %s on %s is disabled: writes would not reach the filter; ALTER TABLE %s ENABLE ALWAYS TRIGGER %s", tr.name, p.qname, p.qname, tr.name)
		}
	}
	return nil
}

// Backend returns "postgres".
func (p *Postgres) Backend() string { return "postgres" }

// Table returns the guarded table's name.
func (p *Postgres) Table() string { return p.qname }

// Ping checks the database.
func (p *Postgres) Ping(ctx context.Context) error { return p.pool.Ping(ctx) }

// Close closes the connection pool.
func (p *Postgres) Close() error { p.pool.Close(); return nil }

// GuardID returns the guarded table's identity.
func (p *Postgres) GuardID() string { return p.guardID }

// Get reads one row.
func (p *Postgres) Get(ctx context.Context, key string) ([]byte, bool, error) {
	var v []byte
	err := p.pool.QueryRow(ctx, `SELECT v FROM `+p.qname+` WHERE k = $1`, key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("postgres get: %w", err)
	}
	return v, true, nil
}

// commitOutcome classifies a failed COMMIT. The transaction certainly did
// not commit when the server answered with an ERROR (a serialization
// failure, a deferred constraint: the session goes on, so the transaction
// was aborted; an error after the commit record cannot be reported as one),
// when the server answered ROLLBACK (pgx.ErrTxCommitRollback), or when the
// error came before anything was sent. A FATAL or PANIC can come after the
// commit record was written (the backend terminated, or the server failed
// flushing the log and recovers what reached the disk), and a broken
// connection loses the answer: those leave it unknown.
func commitOutcome(err error) Outcome {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		severity := pgErr.SeverityUnlocalized
		if severity == "" { // servers before 9.6 send only the localized one
			severity = pgErr.Severity
		}
		if severity == "ERROR" {
			return NotCommitted
		}
		return MaybeCommitted
	}
	if errors.Is(err, pgx.ErrTxCommitRollback) || pgconn.SafeToRetry(err) {
		return NotCommitted
	}
	return MaybeCommitted
}

// Put inserts or updates a row; see Store. The INSERT's trigger writes the
// 'I' entry of a new row with the caller's origin (set for the transaction
// only, so no other write of this pool carries it) and leaves the
// transaction's first entry in cacheguard.first; created runs while the
// transaction holds the log lock the trigger took, so every entry below
// that one has committed or rolled back for good, and the entries from it
// on are this transaction's (a user's triggers may have written some
// besides the row's): the row's 'I' is the last 'I' of its key among them.
// The reader created gets reads through the transaction itself (one from
// the pool could wait for connections held by transactions queued behind
// the log lock).
func (p *Postgres) Put(ctx context.Context, key string, val []byte, origin string, created func(Creation) error) (bool, Outcome, error) {
	tx, err := p.pool.Begin(ctx)
	if err != nil {
		return false, NotCommitted, fmt.Errorf("postgres put: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) // no-op after Commit
	// xmax = 0 holds for a row version this statement inserted, not for
	// one it updated: it tells a created row from an overwritten one. A
	// concurrent Put of the same new key waits here on our row lock and
	// then updates (we committed) or inserts (we rolled back), so exactly
	// one transaction creates each row. One round trip for the three.
	b := &pgx.Batch{}
	b.Queue(`SELECT set_config('cacheguard.origin', $1, true)`, origin)
	// RETURNING k: a BEFORE trigger of the user's may have changed the
	// key (lower-cased it, say); the row, and its entry, hold that one.
	b.Queue(`INSERT INTO `+p.qname+` (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v RETURNING xmax = 0, k`, key, val)
	b.Queue(`SELECT coalesce(nullif(current_setting('cacheguard.first', true), ''), '0')::bigint`)
	var isNew bool
	var first, seq int64
	stored := key
	br := tx.SendBatch(ctx, b)
	_, err = br.Exec()
	if err == nil {
		err = br.QueryRow().Scan(&isNew, &stored)
	}
	if err == nil {
		err = br.QueryRow().Scan(&first)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, NotCommitted, fmt.Errorf("postgres put: %w", err)
	}
	if isNew {
		// first is 0 when cacheguard.append is an older version (an
		// instance of an earlier release re-created it): the log lock is
		// held all the same, so the newest 'I' of the key is this
		// transaction's; the catch-up is skipped (First 0).
		err = tx.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM cacheguard.changes WHERE tbl = $1 AND op = 'I' AND k = $2 AND seq >= $3`,
			p.relid, stored, first).Scan(&seq)
		if err != nil {
			return true, NotCommitted, fmt.Errorf("postgres put: %w", err)
		}
		if seq == 0 {
			return true, NotCommitted, fmt.Errorf("postgres put: no change-log entry for the new row: are the triggers on %s missing?", p.qname)
		}
		if err := created(Creation{Key: stored, Seq: seq, First: first, Log: &pgLog{q: tx, relid: p.relid}}); err != nil {
			return true, NotCommitted, err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return isNew, commitOutcome(err), fmt.Errorf("postgres put: commit: %w", err)
	}
	return isNew, NotCommitted, nil
}

// Delete removes a row; see Store. The trigger logs the 'D'.
func (p *Postgres) Delete(ctx context.Context, key string) (bool, error) {
	tag, err := p.pool.Exec(ctx, `DELETE FROM `+p.qname+` WHERE k = $1`, key)
	if err != nil {
		return false, fmt.Errorf("postgres delete: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// Existing returns the keys among keys that have a row.
func (p *Postgres) Existing(ctx context.Context, keys []string) ([]string, error) {
	var out []string
	for len(keys) > 0 {
		n := min(len(keys), 10000)
		rows, err := p.pool.Query(ctx, `SELECT k FROM `+p.qname+` WHERE k = ANY($1)`, keys[:n])
		if err != nil {
			return nil, fmt.Errorf("postgres existing: %w", err)
		}
		got, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return nil, fmt.Errorf("postgres existing: %w", err)
		}
		out = append(out, got...)
		keys = keys[n:]
	}
	return out, nil
}

// pgSeedKey is SeedKey in SQL, for prefix $1 and number i: at least eight
// digits (lpad alone would cut longer numbers to eight).
const pgSeedKey = `$1 || lpad(i::text, greatest(8, length(i::text)), '0')`

// Seed inserts n rows with keys SeedKey(prefix, 0..n-1), skipping existing
// ones, in one statement; the trigger logs them (with no origin, so every
// instance applies them).
func (p *Postgres) Seed(ctx context.Context, prefix string, n int) error {
	_, err := p.pool.Exec(ctx, `INSERT INTO `+p.qname+` (k, v)
		SELECT `+pgSeedKey+`, convert_to('v:' || `+pgSeedKey+`, 'UTF8')
		FROM generate_series(0, $2 - 1) AS i ON CONFLICT (k) DO NOTHING`, prefix, n)
	if err != nil {
		return fmt.Errorf("postgres seed: %w", err)
	}
	return nil
}

// Reset empties the guarded table and its change-log entries and renews its
// GuardID (so that no snapshot of the old contents is loaded), but only if
// cacheguard created the table: ErrNotOwned otherwise, with nothing
// changed. Tests and the load generator call it.
func (p *Postgres) Reset(ctx context.Context) error {
	err := pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		// The marker is the table's with this oid; the name must still
		// name that table (it may have been dropped or renamed since
		// Open, and another table created under the name), checked
		// again once the lock keeps it from changing until the commit.
		owned := func() error {
			var owned bool
			err := tx.QueryRow(ctx, `SELECT created_by_cacheguard FROM cacheguard.guarded
				WHERE tbl = $1 AND name IN ($2, $3) AND to_regclass($2) = $1::oid FOR UPDATE`, p.relid, p.qname, p.bare).Scan(&owned)
			if errors.Is(err, pgx.ErrNoRows) || (err == nil && !owned) {
				return fmt.Errorf("%w: %s", ErrNotOwned, p.qname)
			}
			return err
		}
		if err := owned(); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `LOCK TABLE `+p.qname+` IN ACCESS EXCLUSIVE MODE`); err != nil {
			return err
		}
		if err := owned(); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `TRUNCATE `+p.qname); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM cacheguard.changes WHERE tbl = $1`, p.relid); err != nil {
			return err
		}
		id := randomID()
		if _, err := tx.Exec(ctx, `UPDATE cacheguard.guarded SET guard_id = $2 WHERE tbl = $1`, p.relid, id); err != nil {
			return err
		}
		p.guardID = id
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres reset: %w", err)
	}
	return nil
}

// LogBounds returns the lowest and highest seq in the change log (0, 0 when
// it is empty), over all guarded tables: the positions are global.
func (p *Postgres) LogBounds(ctx context.Context) (lo, hi int64, err error) {
	err = p.pool.QueryRow(ctx, `SELECT coalesce(min(seq), 0), coalesce(max(seq), 0) FROM cacheguard.changes`).Scan(&lo, &hi)
	if err != nil {
		return 0, 0, fmt.Errorf("postgres log bounds: %w", err)
	}
	return lo, hi, nil
}

// pgLog reads the log through a connection or a transaction.
type pgLog struct {
	q interface {
		Query(context.Context, string, ...any) (pgx.Rows, error)
	}
	relid uint32
}

// Changes reads the entries in one statement; see LogReader.
func (r *pgLog) Changes(ctx context.Context, after, before int64, fn func(Change) error) error {
	rows, err := r.q.Query(ctx, `SELECT seq, op, k, origin, at FROM cacheguard.changes WHERE tbl = $1 AND seq > $2 AND seq < $3 ORDER BY seq`, r.relid, after, before)
	if err != nil {
		return fmt.Errorf("postgres changes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var c Change
		var op string
		if err := rows.Scan(&c.Seq, &op, &c.Key, &c.Origin, &c.At); err != nil {
			return fmt.Errorf("postgres changes: %w", err)
		}
		c.Op = op[0]
		if err := fn(c); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres changes: %w", err)
	}
	return nil
}

// pgConn is a Conn on a pool connection.
type pgConn struct {
	pgLog
	c     *pgxpool.Conn
	table string
}

// Conn takes a connection from the pool.
func (p *Postgres) Conn(ctx context.Context) (Conn, error) {
	c, err := p.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return &pgConn{pgLog: pgLog{q: c, relid: p.relid}, c: c, table: p.qname}, nil
}

func (c *pgConn) Release() { c.c.Release() }

// Entry identifies the entry seq; see Conn. The time is in microseconds since
// the epoch, whatever the session's time zone.
func (c *pgConn) Entry(ctx context.Context, seq int64) (string, error) {
	var id string
	err := c.c.QueryRow(ctx, `SELECT concat_ws(' ', tbl, op, (extract(epoch FROM at) * 1000000)::bigint, k) FROM cacheguard.changes WHERE seq = $1`, seq).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("postgres change %d: %w", seq, err)
	}
	return id, nil
}

// ScanKeys reads all keys in one REPEATABLE READ snapshot and returns the
// highest change-log seq visible in it: by the log's commit order, the scan
// holds exactly the effect of the entries up to that seq.
func (c *pgConn) ScanKeys(ctx context.Context, fn func(total int64, keys []string) error) (int64, error) {
	var seq int64
	err := pgx.BeginTxFunc(ctx, c.c, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var total int64
		if err := tx.QueryRow(ctx, `SELECT (SELECT coalesce(max(seq), 0) FROM cacheguard.changes), (SELECT count(*) FROM `+c.table+`)`).Scan(&seq, &total); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT k FROM `+c.table)
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
		return 0, fmt.Errorf("postgres scan: %w", err)
	}
	return seq, nil
}

// Listen holds a dedicated connection that LISTENs on NotifyChannel and calls
// wake for every notification about the guarded table, and once after each
// (re)connection (a notification sent while it was not listening is lost;
// wake lets the caller catch up from the log). It returns when ctx is done;
// connection failures are retried every retry interval and reported through
// onErr.
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
		return fmt.Errorf("listen: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, `LISTEN `+NotifyChannel); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	wake()
	mine := strconv.FormatUint(uint64(p.relid), 10)
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("listen: %w", err)
		}
		if strings.TrimSpace(n.Payload) == mine {
			wake()
		}
	}
}
