package guard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed25b00da8/cuckoo"
)

// Config configures New.
type Config struct {
	// Store is the database. Required.
	Store Store
	// NoFilter turns the guard off: every GET reads the database (the
	// baseline of the load runs).
	NoFilter bool
	// Capacity is the number of keys the filter is sized for; 0 sizes it
	// at twice the table's rows, at least MinCapacity.
	Capacity int
	// FingerprintBits is 8, 12 or 15; 0 means 12, or the size that
	// FalsePositiveRate chooses.
	FingerprintBits int
	// FalsePositiveRate, if not 0, chooses the fingerprint size: the
	// smallest whose false-positive rate at the filter's capacity is at
	// most this (cuckoo.WithFalsePositiveRate). Give it or
	// FingerprintBits, not both.
	FalsePositiveRate float64
	// Snapshot, if not empty, is a snapshot file (PostgreSQL only): when
	// it exists the filter is loaded from it and the change log since it
	// is applied, instead of scanning the table. WriteSnapshot writes it.
	Snapshot string
	// PollInterval bounds how long a change committed by another instance
	// can go unapplied when notifications are lost (PostgreSQL); 0 means
	// DefaultPollInterval.
	PollInterval time.Duration
	// NoListen disables LISTEN, leaving only the poll (tests).
	NoListen bool
	// RequestTimeout bounds each request's database work; 0 means 5s.
	RequestTimeout time.Duration
	// Log receives progress and errors; nil discards them.
	Log *log.Logger
}

// MinCapacity is the smallest capacity New picks by itself.
const MinCapacity = 100_000

// DefaultPollInterval is the default Config.PollInterval.
const DefaultPollInterval = time.Second

// ErrFilterFull is returned (503) by a PUT whose new key does not fit into
// the filter: the row is not written, since it could not be guarded.
var ErrFilterFull = errors.New("cacheguard: filter is full; restart with a larger -capacity")

// Service is the HTTP key-value service with its filter.
type Service struct {
	store Store
	pg    *Postgres // nil unless store is PostgreSQL
	f     *cuckoo.Filter
	cfg   Config
	log   *log.Logger

	// snapMu: PUTs hold it shared from their filter insert to the end of
	// their transaction; WriteSnapshot holds it exclusively, so a
	// snapshot never holds the copy of a creation still in flight.
	snapMu sync.RWMutex
	// applyMu serializes applying the change log (catchUp) and guards
	// the filter's position in it with snapshots.
	applyMu sync.Mutex
	applied atomic.Int64 // last change-log seq applied
	wake    chan struct{}
	cancel  context.CancelFunc
	done    sync.WaitGroup

	degraded atomic.Bool // a foreign key did not fit: the filter is bypassed
	source   string      // "scan", "snapshot" or "none"

	gets, dbReads, rejects, falsePos atomic.Int64
	puts, created, deletes, deleted  atomic.Int64
	leaked, applyErrs                atomic.Int64
}

// New builds the filter from the table (or from cfg.Snapshot plus the change
// log) and, for PostgreSQL, starts following the change log.
func New(ctx context.Context, cfg Config) (*Service, error) {
	if cfg.Store == nil {
		return nil, errors.New("cacheguard: no store")
	}
	if cfg.FalsePositiveRate != 0 {
		if cfg.FingerprintBits != 0 {
			return nil, errors.New("cacheguard: a false-positive rate and fingerprint bits both given: give one")
		}
		f, err := cuckoo.New(1, cuckoo.WithFalsePositiveRate(cfg.FalsePositiveRate))
		if err != nil {
			return nil, fmt.Errorf("cacheguard: %w", err)
		}
		cfg.FingerprintBits = f.FingerprintBits()
	}
	if cfg.FingerprintBits == 0 {
		cfg.FingerprintBits = cuckoo.DefaultFingerprintBits
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 5 * time.Second
	}
	if cfg.Capacity < 0 {
		return nil, fmt.Errorf("cacheguard: negative capacity %d", cfg.Capacity)
	}
	s := &Service{store: cfg.Store, cfg: cfg, log: cfg.Log, wake: make(chan struct{}, 1), source: "none"}
	if s.log == nil {
		s.log = log.New(io.Discard, "", 0)
	}
	s.pg, _ = cfg.Store.(*Postgres)
	if err := cfg.Store.Ping(ctx); err != nil {
		return nil, fmt.Errorf("cacheguard: database unreachable: %w", err)
	}
	if cfg.NoFilter {
		if cfg.Snapshot != "" {
			return nil, errors.New("cacheguard: a snapshot needs the filter")
		}
		return s, nil
	}
	if cfg.Snapshot != "" && s.pg == nil {
		return nil, errors.New("cacheguard: snapshots need the PostgreSQL change log (-dsn)")
	}
	loaded, err := s.loadSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	if !loaded {
		if err := s.build(ctx); err != nil {
			return nil, err
		}
	}
	if s.pg != nil {
		// Apply what committed since the scan or snapshot before serving.
		if err := s.catchUp(ctx); err != nil {
			return nil, err
		}
		fctx, cancel := context.WithCancel(context.Background())
		s.cancel = cancel
		s.done.Add(1)
		go s.follow(fctx)
		if !cfg.NoListen {
			s.done.Add(1)
			go func() {
				defer s.done.Done()
				s.pg.Listen(fctx, cfg.PollInterval, s.poke, func(err error) { s.log.Printf("%v (retrying)", err) })
			}()
		}
	}
	return s, nil
}

// Close stops following the change log. It does not close the store.
func (s *Service) Close() {
	if s.cancel != nil {
		s.cancel()
		s.done.Wait()
	}
}

// build sizes the filter from the table's row count and fills it with every
// key (InsertBatch), printing progress on long builds.
func (s *Service) build(ctx context.Context) error {
	start := time.Now()
	lastReport := start
	var n int64
	var keys [][]byte
	mk := func(total int64) error {
		c := s.cfg.Capacity
		if c == 0 {
			c = int(max(2*total, MinCapacity))
		}
		f, err := cuckoo.New(c, cuckoo.WithFingerprintBits(s.cfg.FingerprintBits))
		if err != nil {
			return fmt.Errorf("cacheguard: filter: %w", err)
		}
		s.f = f
		return nil
	}
	seq, err := s.store.ScanKeys(ctx, func(total int64, batch []string) error {
		if s.f == nil {
			if err := mk(total); err != nil {
				return err
			}
		}
		keys = keys[:0]
		for _, k := range batch {
			keys = append(keys, []byte(k))
		}
		if _, err := s.f.InsertBatch(keys); err != nil {
			return fmt.Errorf("cacheguard: filter of capacity %d cannot hold the table's %d keys: %w", s.f.Cap(), total, err)
		}
		n += int64(len(batch))
		if now := time.Now(); now.Sub(lastReport) >= time.Second {
			lastReport = now
			s.log.Printf("building filter: %d/%d keys (%.0f%%)", n, total, 100*float64(n)/float64(max(total, 1)))
		}
		return nil
	})
	if err != nil {
		return err
	}
	if s.f == nil {
		if err := mk(0); err != nil {
			return err
		}
	}
	s.applied.Store(seq)
	s.source = "scan"
	s.log.Printf("filter built from %d keys in %v: capacity %d, load factor %.4f, expected false-positive rate %.4f%%",
		n, time.Since(start).Round(time.Millisecond), s.f.Cap(), s.f.LoadFactor(), 100*s.expectedFPR())
	return nil
}

func (s *Service) expectedFPR() float64 {
	if s.f == nil {
		return 0
	}
	return 8 * s.f.LoadFactor() / math.Exp2(float64(s.f.FingerprintBits()))
}

// poke wakes the change-log follower without blocking.
func (s *Service) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// follow applies the change log whenever a notification arrives and at
// least every PollInterval.
func (s *Service) follow(ctx context.Context) {
	defer s.done.Done()
	t := time.NewTicker(s.cfg.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-t.C:
		}
		if err := s.catchUp(ctx); err != nil && ctx.Err() == nil {
			s.applyErrs.Add(1)
			s.log.Printf("applying the change log: %v (retrying)", err)
		}
	}
}

// catchUp applies every change-log entry after the applied position.
//
// It takes its connection before applyMu, never while holding it: a
// creating PUT holds the log lock while it waits for applyMu (handlePut),
// and every connection of the pool can be held by transactions queued behind
// that lock.
func (s *Service) catchUp(ctx context.Context) error {
	lg, err := s.pg.Reader(ctx)
	if err != nil {
		return err
	}
	defer lg.Release()
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	return s.catchUpLocked(ctx, lg, math.MaxInt64)
}

// catchUpLocked applies the change-log entries below seq `before` in seq
// order, reading them through lg; applyMu is held.
//
// An entry 'I' of another instance inserts the key; an 'I' of this instance
// is skipped, because its PUT inserted the key before committing (see
// handlePut). Every 'D', ours included, deletes one copy, here and nowhere
// else: a DELETE in PostgreSQL mode leaves the filter alone. Applying the
// deletes in seq order is what makes them safe: for each key the log
// alternates I, D, I, D (rows are created and deleted by committed
// transactions, and the log commits in seq order), so when a 'D' is applied
// the 'I' before it has already added its copy, either here or, for our own,
// before its commit. The copies of a key therefore number (its I entries
// applied or inserted by our PUTs) minus (its D entries applied), which is at
// least one whenever the key's last entry is an 'I' we have applied or
// written ourselves, that is whenever its row is present, except for a row
// another instance created whose entry we have not applied yet: that is the
// propagation window of the README.
//
// A creating PUT applies the entries before its own first (handlePut), so
// the deletions still unapplied when it adds its copy never include one of
// the same key: a key has at most one copy per row however far the follower
// lags behind.
func (s *Service) catchUpLocked(ctx context.Context, lg *LogReader, before int64) error {
	const page = 1000
	origin := s.pg.Origin()
	for {
		n := 0
		var kb []byte
		_, err := lg.Changes(ctx, s.applied.Load(), before, page, func(c Change) {
			n++
			kb = append(kb[:0], c.Key...)
			switch {
			case c.Op == 'I' && c.Origin != origin:
				if err := s.f.Insert(kb); err != nil && !s.degraded.Swap(true) {
					// The key cannot be guarded: stop
					// rejecting anything until a restart
					// with a larger capacity.
					s.log.Printf("filter full applying change %d (%v): the filter is bypassed from now on; restart with a larger -capacity", c.Seq, err)
				}
			case c.Op == 'D':
				s.f.Delete(kb)
			}
			s.applied.Store(c.Seq)
		})
		if err != nil {
			return err
		}
		if n < page {
			return nil
		}
	}
}

// AppliedSeq returns the last change-log seq this instance has applied.
func (s *Service) AppliedSeq() int64 { return s.applied.Load() }

// MayContain reports whether the filter would let a GET for key reach the
// database (true without a filter).
func (s *Service) MayContain(key string) bool {
	return s.f == nil || s.degraded.Load() || s.f.Lookup([]byte(key))
}

// Stats is the JSON of /stats.
type Stats struct {
	Backend         string  `json:"backend"`
	Filter          bool    `json:"filter"`
	Degraded        bool    `json:"degraded"`
	BuiltFrom       string  `json:"built_from"`
	Keys            int     `json:"filter_keys"`
	Capacity        int     `json:"filter_capacity"`
	LoadFactor      float64 `json:"load_factor"`
	FingerprintBits int     `json:"fingerprint_bits"`
	ExpectedFPR     float64 `json:"expected_false_positive_rate"`
	Gets            int64   `json:"gets"`
	DBReads         int64   `json:"db_reads"`
	Rejected        int64   `json:"queries_avoided"`
	FalsePositives  int64   `json:"false_positives"`
	Puts            int64   `json:"puts"`
	Created         int64   `json:"rows_created"`
	Deletes         int64   `json:"deletes"`
	Deleted         int64   `json:"rows_deleted"`
	LeakedCopies    int64   `json:"leaked_copies"`
	AppliedSeq      int64   `json:"applied_seq"`
	ApplyErrors     int64   `json:"apply_errors"`
}

// Stats returns the counters.
func (s *Service) Stats() Stats {
	st := Stats{
		Backend: s.store.Backend(), Filter: s.f != nil, Degraded: s.degraded.Load(), BuiltFrom: s.source,
		Gets: s.gets.Load(), DBReads: s.dbReads.Load(), Rejected: s.rejects.Load(), FalsePositives: s.falsePos.Load(),
		Puts: s.puts.Load(), Created: s.created.Load(), Deletes: s.deletes.Load(), Deleted: s.deleted.Load(),
		LeakedCopies: s.leaked.Load(), AppliedSeq: s.applied.Load(), ApplyErrors: s.applyErrs.Load(),
	}
	if s.f != nil {
		st.Keys, st.Capacity, st.LoadFactor, st.FingerprintBits = s.f.Len(), s.f.Cap(), s.f.LoadFactor(), s.f.FingerprintBits()
		st.ExpectedFPR = s.expectedFPR()
	}
	return st
}

// Handler returns the HTTP API: GET, PUT and DELETE /items/{key} and GET
// /stats. The key is the rest of the path after /items/, unescaped: it may
// contain "/" (GET /items/a/b is key "a/b", as is GET /items/a%2Fb).
func (s *Service) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{key...}", s.handleGet)
	mux.HandleFunc("PUT /items/{key...}", s.handlePut)
	mux.HandleFunc("DELETE /items/{key...}", s.handleDelete)
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(s.Stats())
	})
	return mux
}

// SourceHeader says who answered a GET: "filter" (rejected without a query)
// or "db".
const SourceHeader = "X-Cacheguard-Source"

func (s *Service) key(w http.ResponseWriter, r *http.Request) (string, bool) {
	k := r.PathValue("key")
	if err := CheckKey(k); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return "", false
	}
	return k, true
}

// dbError logs err and answers 503 with a generic message: the error may
// name the database's host, user and database, which are not the
// client's business.
func (s *Service) dbError(w http.ResponseWriter, err error) {
	s.log.Print(err)
	http.Error(w, "database unavailable", http.StatusServiceUnavailable)
}

func (s *Service) handleGet(w http.ResponseWriter, r *http.Request) {
	k, ok := s.key(w, r)
	if !ok {
		return
	}
	s.gets.Add(1)
	guarded := s.f != nil && !s.degraded.Load()
	if guarded && !s.f.Lookup([]byte(k)) {
		s.rejects.Add(1)
		w.Header().Set(SourceHeader, "filter")
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	s.dbReads.Add(1)
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
	defer cancel()
	v, found, err := s.store.Get(ctx, k)
	if err != nil {
		s.dbError(w, err)
		return
	}
	w.Header().Set(SourceHeader, "db")
	if !found {
		if guarded {
			s.falsePos.Add(1)
		}
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Write(v)
}

// handlePut writes the row and, if the row is new, adds the key to the
// filter. Why no GET can be rejected while the row is present:
//
//   - The key goes into the filter inside the transaction, before the
//     commit makes the row visible (Store.Put calls created between the
//     write and the commit). From the moment any reader can see the row, the
//     filter holds the key.
//   - Whether the row is new is decided inside the transaction (SQLite: the
//     write lock is taken at BEGIN; PostgreSQL: INSERT ... ON CONFLICT holds
//     the row lock), so of several concurrent PUTs of one new key exactly
//     one inserts a copy: the filter holds one copy per row.
//   - With PostgreSQL, deletions reach the filter only through the change
//     log, which the follower applies asynchronously. Before adding its
//     copy, the PUT therefore applies the log up to its own entry (it holds
//     the log lock, so every entry before its own is final), reading it
//     through its own transaction. The deletion of the key's previous row
//     is among those entries, so its copy is gone before the new one is
//     added. Without this, a key deleted (through any instance) and
//     recreated through this instance faster than the follower applied the
//     deletions gained a copy per round, and its ninth copy did not fit
//     (ErrFull: at most 2 buckets × 4 slots of one fingerprint) although
//     the filter was nearly empty.
//   - If the transaction fails after the insert and certainly did not
//     commit, the row never became visible and the copy is removed again
//     (Delete of a key we inserted removes one copy of its fingerprint, so
//     any other copy stays). If the commit's answer was lost
//     (MaybeCommitted), the copy stays: if the row exists it is needed; if
//     not, it only costs false positives (counted as leaked_copies).
//   - If the filter is full, nothing is written (503): a row that could
//     not be guarded is never created.
//   - An update of an existing row does not touch the filter.
//
// A GET that overlaps the PUT may miss the row only while it is not yet
// committed, which a reader of the database would see as absent too.
func (s *Service) handlePut(w http.ResponseWriter, r *http.Request) {
	k, ok := s.key(w, r)
	if !ok {
		return
	}
	val, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxValueLen))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, fmt.Sprintf("value over %d bytes", MaxValueLen), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
		return
	}
	s.puts.Add(1)
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
	defer cancel()
	kb := []byte(k)
	inserted := false
	created := func(seq int64, lg *LogReader) error {
		if s.f == nil {
			return nil
		}
		if lg != nil {
			s.applyMu.Lock()
			defer s.applyMu.Unlock()
			if err := s.catchUpLocked(ctx, lg, seq); err != nil {
				return err
			}
		}
		if err := s.f.Insert(kb); err != nil {
			return ErrFilterFull
		}
		inserted = true
		return nil
	}
	if s.f != nil {
		s.snapMu.RLock()
		defer s.snapMu.RUnlock()
	}
	var isNew bool
	var outcome Outcome
	if s.pg != nil {
		isNew, outcome, err = s.pg.PutLogged(ctx, k, val, created)
	} else {
		isNew, outcome, err = s.store.Put(ctx, k, val, func() error { return created(0, nil) })
	}
	if err != nil {
		if inserted {
			if outcome == NotCommitted {
				s.f.Delete(kb)
			} else {
				s.leaked.Add(1)
			}
		}
		if errors.Is(err, ErrFilterFull) {
			s.log.Print(err)
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		s.dbError(w, err)
		return
	}
	if isNew {
		s.created.Add(1)
		w.WriteHeader(http.StatusCreated)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleDelete deletes the row, then its copy in the filter. Why no GET can
// be rejected while the row is present:
//
//   - The copy is removed only after the delete committed and only if a row
//     was really deleted, so the copy removed is the one its creating PUT
//     inserted before that row became visible. Until the commit the row is
//     present and its copy is there; after it the row is gone.
//   - If the database fails (before or at the commit), the filter is left
//     alone: if the row survived, its copy is still there; if it was
//     deleted, the stale copy only causes false positives.
//   - Concurrent PUT and DELETE of one key: the database orders them
//     (SQLite writes one at a time, PostgreSQL locks the row), so the key's
//     row history is create, delete, create, ...; each delete's removal
//     follows its commit, which follows the commit of the create it undoes,
//     which follows that create's insert. So the copies never go below the
//     number of rows, whatever the interleaving of the filter operations.
//   - With PostgreSQL, deletes reach the filter only through the change log,
//     in seq order (catchUpLocked), for this instance's deletes as for the
//     others': removing the copy here as well would remove it twice.
//
// A GET overlapping a re-creation can miss only during a moment the row was
// absent. The one gap left is the library's documented corner: two different
// keys with the same fingerprint and buckets, one inserted and the other
// deleted during a single Lookup of the first (a probability of order
// 2^-12 per pair times the chance of that overlap).
func (s *Service) handleDelete(w http.ResponseWriter, r *http.Request) {
	k, ok := s.key(w, r)
	if !ok {
		return
	}
	s.deletes.Add(1)
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
	defer cancel()
	deleted, err := s.store.Delete(ctx, k)
	if err != nil {
		s.dbError(w, err)
		return
	}
	if !deleted {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	s.deleted.Add(1)
	if s.f != nil {
		if s.pg != nil {
			s.poke() // the follower removes it, in log order
		} else {
			s.f.Delete([]byte(k))
		}
	}
	w.WriteHeader(http.StatusNoContent)
}
