// Command cacheguard is a key-value HTTP service over a database with a
// cuckoo filter in front of it: GET /items/{key} for a key the filter rejects
// answers 404 without querying the database, which is what stops a flood of
// requests for absent keys (cache penetration) from reaching it.
//
//	go run .                                  # SQLite in the temp dir, no setup
//	go run . -dsn postgres://u:p@127.0.0.1/db # PostgreSQL, several instances
//
// PUT /items/{key} (body = value), DELETE /items/{key}, GET /stats (JSON:
// load factor, expected false-positive rate, queries avoided). See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/seed25b00da8/cuckoo"
	"github.com/seed25b00da8/cuckoo/examples/cacheguard/guard"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second signal during the shutdown ends the process at once
	}()
	err := run(ctx, os.Args[1:], os.Stderr, nil)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		// The one "cacheguard:" of the message: run's errors, guard's
		// included, carry no prefix of their own.
		fmt.Fprintln(os.Stderr, "cacheguard:", err)
		os.Exit(1)
	}
}

// run starts the service and serves until ctx is done. If ready is not nil it
// receives the listening address once the service is up.
func run(ctx context.Context, args []string, stderr io.Writer, ready chan<- string) error {
	fs := flag.NewFlagSet("cacheguard", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address")
	sqlitePath := fs.String("sqlite", filepath.Join(os.TempDir(), "cacheguard.db"), "SQLite database file (used unless -dsn is set)")
	dsn := fs.String("dsn", "", "PostgreSQL DSN (postgres://user:pass@host:port/db); several instances may share it")
	capacity := fs.Int("capacity", 0, "filter capacity in keys (0: twice the table's rows, at least 100000, rebuilt so whenever the filter fills)")
	bits := fs.Int("fpbits", 0, "fingerprint bits: 12 (five per bucket, the default), 15 (four per bucket) or 8 (two four-slot buckets per word); or the layout -fpr chooses")
	fpr := fs.Float64("fpr", 0, "false-positive rate allowed at the filter's capacity (0.001 for 0.1%): chooses the fingerprint size and slots per bucket; give -fpr or -fpbits")
	noFilter := fs.Bool("no-filter", false, "serve without the filter (every GET queries the database)")
	table := fs.String("table", "", "the guarded table, with columns k text (unique) and v bytea/BLOB; created if missing (default "+guard.DefaultPostgresTable+" with -dsn, "+guard.DefaultSQLiteTable+" with SQLite)")
	snapshot := fs.String("snapshot", "", "filter snapshot file, loaded at start if it exists and written at shutdown")
	poll := fs.Duration("poll", guard.DefaultPollInterval, "the change log is read at least this often (SQLite: this often; PostgreSQL: besides notifications)")
	seed := fs.Int("seed", 0, "insert this many demo rows (key00000000...) before starting, keeping existing ones")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	// Every flag that can be checked without I/O is checked here, before
	// any database is opened: a bad flag leaves the database untouched.
	given := make(map[string]bool)
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if err := checkLayout(given["fpr"], *fpr, given["fpbits"], *bits); err != nil {
		return err
	}
	if *capacity < 0 || *capacity > cuckoo.MaxCapacity {
		return fmt.Errorf("-capacity %d: want 0 to %d", *capacity, cuckoo.MaxCapacity)
	}
	if *poll < minPoll {
		return fmt.Errorf("-poll %v: must be at least %v (each poll queries the database)", *poll, minPoll)
	}
	if *noFilter && *snapshot != "" {
		return errors.New("-snapshot needs the filter: not with -no-filter")
	}
	if *seed < 0 {
		return fmt.Errorf("-seed %d: must not be negative", *seed)
	}
	if *snapshot != "" {
		if err := checkSnapshotDir(*snapshot); err != nil {
			return err
		}
	}
	logger := log.New(stderr, "cacheguard: ", log.LstdFlags)
	// The address is taken before the database is opened, so a bad or
	// busy one leaves it untouched too (no table created or triggers
	// installed for a service that cannot serve).
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	defer ln.Close() // after Serve, a no-op

	var store guard.Store
	if *dsn != "" {
		pg, err := guard.OpenPostgres(ctx, *dsn, guard.PGOptions{Table: *table})
		if err != nil {
			return err
		}
		store = pg
	} else {
		sl, err := guard.OpenSQLite(ctx, *sqlitePath, guard.SQLiteOptions{Table: *table})
		if err != nil {
			return err
		}
		store = sl
		logger.Printf("SQLite database %s", *sqlitePath)
	}
	defer store.Close()
	logger.Printf("guarding table %s (triggers log every write to it)", store.Table())
	if *seed > 0 {
		if err := store.Seed(ctx, "key", *seed); err != nil {
			return err
		}
	}

	svc, err := guard.New(ctx, guard.Config{
		Store: store, NoFilter: *noFilter, Capacity: *capacity, FingerprintBits: *bits, FalsePositiveRate: *fpr,
		Snapshot: *snapshot, PollInterval: *poll, Log: logger,
	})
	if err != nil {
		return err
	}
	defer svc.Close()

	// ReadTimeout bounds a request's body too (a value is at most
	// guard.MaxValueLen), so that a stalled client holds a connection
	// for a bounded time.
	srv := &http.Server{Handler: svc.Handler(), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	st := svc.Stats()
	logger.Printf("serving on http://%s (%s, filter %v: %d keys, load factor %.4f, expected FPR %.4f%%)",
		ln.Addr(), st.Backend, st.Filter, st.Keys, st.LoadFactor, 100*st.ExpectedFPR)
	if ready != nil {
		ready <- ln.Addr().String()
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Printf("shutting down (%s backend)", st.Backend)
	// Requests in flight get shutdownWait to finish; then their
	// connections are closed. The snapshot has its own time: a slow
	// client must not cost it (it waits for no request: PUTs in flight
	// hold it back only until their transaction ends).
	sctx, cancel := context.WithTimeout(context.Background(), shutdownWait)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		logger.Printf("requests still running after %v (%v): closing their connections", shutdownWait, err)
		srv.Close()
	}
	if *snapshot != "" {
		wctx, cancel := context.WithTimeout(context.Background(), snapshotWait)
		defer cancel()
		if err := svc.WriteSnapshot(wctx, *snapshot); err != nil {
			return err
		}
		logger.Printf("snapshot written to %s (change %d)", *snapshot, svc.AppliedSeq())
	}
	return nil
}

// minPoll is the least -poll: each poll reads the change log.
const minPoll = 10 * time.Millisecond

// shutdownWait is how long requests in flight may run at shutdown (a
// variable for tests), and snapshotWait how long the snapshot may take
// after them.
var shutdownWait, snapshotWait = 10 * time.Second, time.Minute

// checkSnapshotDir checks that a snapshot can be written beside path (as
// WriteSnapshot does, through a temporary file in its directory), so that
// a bad -snapshot fails at start, not at shutdown.
func checkSnapshotDir(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".cacheguard-snapshot-check-*")
	if err != nil {
		return fmt.Errorf("-snapshot %s: cannot write in its directory: %w", path, err)
	}
	tmp.Close()
	return os.Remove(tmp.Name())
}

// checkLayout checks -fpr and -fpbits as cuckoo.New checks
// WithFalsePositiveRate and WithFingerprintBits. A flag counts as given when
// it is on the command line, whatever its value: -fpr 0 is a rate no layout
// gives (rejected, as WithFalsePositiveRate(0) is), not the default, which is
// to give no -fpr at all.
func checkLayout(fprGiven bool, fpr float64, bitsGiven bool, bits int) error {
	switch {
	case fprGiven && bitsGiven:
		return errors.New("-fpr and -fpbits both given: give one (-fpr chooses the fingerprint bits)")
	case fprGiven:
		if _, err := cuckoo.New(1, cuckoo.WithFalsePositiveRate(fpr)); err != nil {
			return fmt.Errorf("-fpr %v: %w", fpr, err)
		}
	case bitsGiven:
		if _, err := cuckoo.New(1, cuckoo.WithFingerprintBits(bits)); err != nil {
			return fmt.Errorf("-fpbits %d: %w", bits, err)
		}
	}
	return nil
}
