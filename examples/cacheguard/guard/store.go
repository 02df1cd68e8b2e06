// Package guard is a key-value HTTP service over a database with a cuckoo
// filter in front of it: a GET for a key the filter rejects answers 404
// without a database query (the cache-penetration guard).
//
// The one property everything here is built around: while a row is present
// in the database, the filter of the instance that created it never rejects
// its key, and every other instance stops rejecting it once it has applied
// the change (PostgreSQL, see feed.go). The orderings that give this are
// argued in service.go beside the code.
package guard

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"
)

// MaxKeyLen is the longest key accepted, in bytes.
const MaxKeyLen = 256

// MaxValueLen is the largest value accepted, in bytes.
const MaxValueLen = 1 << 20

// ErrBadKey is wrapped by the error CheckKey returns.
var ErrBadKey = errors.New("cacheguard: bad key")

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

// Outcome says what became of a write transaction that failed.
type Outcome int

const (
	// NotCommitted: the transaction certainly did not commit.
	NotCommitted Outcome = iota
	// MaybeCommitted: the commit was sent and its answer was lost (the
	// connection broke); the transaction may or may not have committed.
	MaybeCommitted
)

// Store is a table of (key, value) rows.
type Store interface {
	// Backend names the database ("sqlite" or "postgres").
	Backend() string
	// Ping checks that the database answers.
	Ping(ctx context.Context) error
	// Get returns the row's value and whether the row exists.
	Get(ctx context.Context, key string) (val []byte, ok bool, err error)
	// Put writes the row in one transaction. If the row did not exist,
	// Put calls created inside the transaction, after the row is written
	// and before the commit; if created returns an error the transaction
	// is rolled back and Put returns that error. When Put fails after
	// created succeeded, outcome says whether the transaction may have
	// committed.
	Put(ctx context.Context, key string, val []byte, created func() error) (isNew bool, outcome Outcome, err error)
	// Delete removes the row in one transaction and reports whether it
	// existed. When it fails, the row may or may not have been deleted.
	Delete(ctx context.Context, key string) (deleted bool, err error)
	// ScanKeys reads every key in one consistent snapshot of the table and
	// hands them to fn in batches, with the row count of that snapshot. It
	// returns the change-log sequence number the snapshot corresponds to
	// (0 for a store without a change log, see Feed).
	ScanKeys(ctx context.Context, fn func(total int64, keys []string) error) (seq int64, err error)
	// Existing returns those of keys that have a row.
	Existing(ctx context.Context, keys []string) ([]string, error)
	// Close releases the database.
	Close() error
}

// scanBatch is how many keys a table scan hands over at a time.
const scanBatch = 4096
