package guard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestCommitOutcome checks how a failed COMMIT is classified: a copy is
// removed only for NotCommitted, so an answer that may follow a written
// commit record (FATAL, PANIC, a lost connection) must be MaybeCommitted.
func TestCommitOutcome(t *testing.T) {
	pg := func(sev, code string) error {
		return fmt.Errorf("postgres put: commit: %w", &pgconn.PgError{Severity: sev, SeverityUnlocalized: sev, Code: code, Message: "m"})
	}
	for _, c := range []struct {
		name string
		err  error
		want Outcome
	}{
		{"serialization failure", pg("ERROR", "40001"), NotCommitted},
		{"deferred constraint", pg("ERROR", "23505"), NotCommitted},
		{"localized severity only", fmt.Errorf("x: %w", &pgconn.PgError{Severity: "ERROR", Code: "40001"}), NotCommitted},
		{"terminated backend", pg("FATAL", "57P01"), MaybeCommitted},
		{"log flush failure", pg("PANIC", "58030"), MaybeCommitted},
		{"server answered ROLLBACK", fmt.Errorf("x: %w", pgx.ErrTxCommitRollback), NotCommitted},
		{"lost connection", fmt.Errorf("x: %w", io.ErrUnexpectedEOF), MaybeCommitted},
		{"context done", context.DeadlineExceeded, MaybeCommitted},
		{"unknown", errors.New("boom"), MaybeCommitted},
	} {
		if got := commitOutcome(c.err); got != c.want {
			t.Errorf("%s: %v; want %v", c.name, got, c.want)
		}
	}
}
