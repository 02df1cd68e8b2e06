// Package guard is a key-value HTTP service over a database with a cuckoo
// filter in front of it: a GET for a key the filter rejects answers 404
// without a database query (the cache-penetration guard).
//
// The one property everything here is built around: while a row is present
// in the guarded table, the filter of the instance that created it never
// rejects its key, and every other instance (and the creating one, for a row
// written by any other client: psql, a batch job, another service) stops
// rejecting it once it has applied the row's change-log entry. Triggers on
// the guarded table write that log in the writing transaction, whoever the
// writer is. The orderings that give the property are argued in service.go
// beside the code.
package guard

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"
	"unicode/utf8"
)

// MaxKeyLen is the longest key accepted, in bytes.
const MaxKeyLen = 256

// MaxValueLen is the largest value accepted, in bytes.
const MaxValueLen = 1 << 20

// ErrBadKey is wrapped by the error CheckKey returns.
var ErrBadKey = errors.New("bad key")

// ErrNotOwned is returned by Reset for a guarded table that the example's
// own setup did not create: the example never empties a table it does not
// own.
var ErrNotOwned = errors.New("the table was not created by cacheguard; refusing to empty it")

// CheckKey returns an error wrapping ErrBadKey unless key is 1 to MaxKeyLen
// bytes of valid UTF-8 without NUL bytes (PostgreSQL text rejects both).
func CheckKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("%w: empty", ErrBadKey)
	case len(key) > MaxKeyLen:
		return fmt.Errorf("%w: %d bytes, the limit is %d", ErrBadKey, len(key), MaxKeyLen)
	case !utf8.ValidString(key):
		return fmt.Errorf("%w: not valid UTF-8", ErrBadKey)
	}
	for i := 0; i < len(key); i++ {
		if key[i] == 0 {
			return fmt.Errorf("%w: contains a NUL byte", ErrBadKey)
		}
	}
	return nil
}

// tableName is what a -table flag may name: an identifier, with PostgreSQL
// a schema-qualified one. Nothing needs quoting, so the name can go into the
// SQL that creates triggers as it is.
var tableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$`)

// Outcome says what became of a write transaction that failed.
type Outcome int

const (
	// NotCommitted: the transaction certainly did not commit.
	NotCommitted Outcome = iota
	// MaybeCommitted: the commit was sent and its answer was lost (the
	// connection broke); the transaction may or may not have committed.
	MaybeCommitted
)

// Change is one change-log entry, written by the guarded table's triggers.
type Change struct {
	Seq    int64
	Op     byte // 'I' a row with key Key appeared, 'D' one disappeared, 'R' the table was truncated
	Key    string
	Origin string // the origin of the Service whose PUT wrote it (Store.Put), or ""
	At     time.Time
}

// LogReader reads the change log.
type LogReader interface {
	// Changes calls fn for every entry of the guarded table with
	// after < seq < before, in seq order, all read in one statement (one
	// snapshot of the database: whole transactions, never part of one).
	// An error from fn stops the reading and is returned.
	Changes(ctx context.Context, after, before int64, fn func(Change) error) error
}

// Conn is a connection of its own for reading the log and scanning the
// table.
type Conn interface {
	LogReader
	// ScanKeys reads every key in one consistent snapshot of the table and
	// hands them to fn in batches, with the row count of that snapshot. It
	// returns the change-log seq the snapshot corresponds to: the scan
	// holds exactly the effect of the log's entries up to it.
	ScanKeys(ctx context.Context, fn func(total int64, keys []string) error) (seq int64, err error)
	// Entry returns a text that identifies the change-log entry seq (of
	// any table: its table, operation, key and time), "" if there is
	// none. A snapshot carries its position's: after a restore from a
	// backup and new writes, the seqs up to the position may name other
	// entries.
	Entry(ctx context.Context, seq int64) (string, error)
	// Release gives the connection back.
	Release()
}

// Creation describes, to Store.Put's created, the row a PUT created.
type Creation struct {
	// Key is the key as the database stored it (a user's trigger may
	// have changed the one the PUT gave); Seq is the seq of the row's
	// 'I' entry, which holds Key.
	Key string
	Seq int64
	// First is the first seq the PUT's transaction may have written:
	// every entry below it is final (committed or rolled back for good);
	// the entries from it on are the transaction's own (its row's, and
	// any a user's trigger wrote in it), uncommitted, which the follower
	// applies once they commit.
	First int64
	// Log reads the change log through the transaction itself.
	Log LogReader
}

// Store is a guarded table of (k text, v bytes) rows and its change log.
type Store interface {
	// Backend names the database ("sqlite" or "postgres").
	Backend() string
	// Table names the guarded table.
	Table() string
	// Ping checks that the database answers.
	Ping(ctx context.Context) error
	// Get returns the row's value and whether the row exists.
	Get(ctx context.Context, key string) (val []byte, ok bool, err error)
	// Put writes the row in one transaction. If the row did not exist,
	// Put calls created inside the transaction, after the row and its
	// change-log entry (carrying origin) are written and before the
	// commit; see Creation. If created returns an error the transaction
	// is rolled back and Put returns that error. When Put fails after
	// created succeeded, outcome says whether the transaction may have
	// committed.
	Put(ctx context.Context, key string, val []byte, origin string, created func(Creation) error) (isNew bool, outcome Outcome, err error)
	// Delete removes the row in one transaction and reports whether it
	// existed. When it fails, the row may or may not have been deleted.
	Delete(ctx context.Context, key string) (deleted bool, err error)
	// Existing returns those of keys that have a row.
	Existing(ctx context.Context, keys []string) ([]string, error)
	// Conn takes a connection for reading the log and scanning.
	Conn(ctx context.Context) (Conn, error)
	// GuardID is the guarded table's random identity, written when
	// cacheguard first guarded it and renewed by Reset: snapshots carry it.
	GuardID() string
	// LogBounds returns the lowest and highest seq in the change log.
	LogBounds(ctx context.Context) (lo, hi int64, err error)
	// Reset empties the guarded table and its change log, if cacheguard
	// created the table (ErrNotOwned otherwise).
	Reset(ctx context.Context) error
	// Seed inserts n rows with keys SeedKey(prefix, 0..n-1), keeping
	// existing ones (the triggers log them like any write).
	Seed(ctx context.Context, prefix string, n int) error
	// Close releases the database.
	Close() error
}

// scanBatch is how many keys a table scan hands over at a time.
const scanBatch = 4096

// SeedKey is the i-th key Seed writes with prefix.
func SeedKey(prefix string, i int) string { return fmt.Sprintf("%s%08d", prefix, i) }
