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
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed25b00da8/cuckoo"
)

// Config configures New.
type Config struct {
	// Store is the guarded table. Required.
	Store Store
	// NoFilter turns the guard off: every GET reads the database (the
	// baseline of the load runs).
	NoFilter bool
	// Capacity is the number of keys the filter is sized for; 0 sizes it
	// at twice the table's rows, at least MinCapacity, and rebuilds it so
	// (from a scan) whenever it fills up, a snapshot's filter included.
	Capacity int
	// FingerprintBits is 8, 12 or 15 (cuckoo.WithFingerprintBits: five
	// 12-bit slots per bucket, four of 8 or 15 bits); 0 means 12, or the
	// layout that FalsePositiveRate chooses.
	FingerprintBits int
	// FalsePositiveRate, if not 0, chooses the bucket layout: the one
	// with the least memory whose false-positive rate at the filter's
	// capacity is at most this (cuckoo.WithFalsePositiveRate). Give it or
	// FingerprintBits, not both.
	FalsePositiveRate float64
	// Snapshot, if not empty, is a snapshot file: when it exists the
	// filter is loaded from it and the change log since it is applied,
	// instead of scanning the table. WriteSnapshot writes it.
	Snapshot string
	// PollInterval bounds how long a committed change can go unapplied:
	// with SQLite it is how often the log is read; with PostgreSQL, the
	// bound when notifications are lost. 0 means DefaultPollInterval.
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

// minCapacity is MinCapacity, lowered by tests that fill filters.
var minCapacity = MinCapacity

// DefaultPollInterval is the default Config.PollInterval.
const DefaultPollInterval = time.Second

// ErrFilterFull is returned (503) by a PUT whose new key does not fit into
// the filter: the row is not written, since it could not be guarded. With
// the capacity chosen automatically the filter is rebuilt larger (a retry
// succeeds once that is done); with a capacity given, a restart with a
// larger one is needed.
var ErrFilterFull = errors.New("filter is full; retry once it is rebuilt larger, or restart with a larger -capacity if one was given")

// growWhenFull asks the follower for a rebuild from a scan, which sizes the
// new filter at twice the table's rows, when the filter filled up and its
// capacity was chosen automatically; what ran at the old size (a degraded
// filter bypassed, PUTs of new keys refused) lasts until the rebuild.
func (s *Service) growWhenFull() {
	if s.cfg.Capacity == 0 && !s.needsRebuild.Swap(true) {
		s.log.Printf("the filter is full: rebuilding it from a scan at twice the table's rows")
		s.poke()
	}
}

// listener is a Store whose log sends notifications (PostgreSQL).
type listener interface {
	Listen(ctx context.Context, retry time.Duration, wake func(), onErr func(error))
}

// Service is the HTTP key-value service with its filter.
type Service struct {
	store Store
	filt  atomic.Pointer[cuckoo.Filter] // nil without a filter; replaced by a rebuild
	// origin tags the change-log entries of this Service's creating PUTs
	// (Store.Put); catchUpLocked skips those among them whose seq is in
	// own. It is random per Service, not per Store: a second Service on
	// the same Store (a restart inside one process, from a snapshot the
	// first one wrote) never takes the first one's creations, whose copies
	// it does not hold, for its own.
	origin string
	cfg    Config
	log    *log.Logger

	// snapMu: PUTs hold it shared from before their filter insert to the
	// end of their transaction; WriteSnapshot and rebuild hold it
	// exclusively, so neither ever sees a creation in flight.
	snapMu sync.RWMutex
	// applyMu serializes applying the change log and guards the filter's
	// position in it.
	applyMu sync.Mutex
	applied atomic.Int64 // last change-log seq applied
	// own holds the seqs of the entries of this Service's creating PUTs
	// whose copies are in the filter and that catchUpLocked has not passed
	// yet (guarded by applyMu). Only those entries are skipped: in
	// PostgreSQL the origin is set for the whole transaction, so a user's
	// trigger that wrote other entries in it (renaming the key on the
	// upsert's update, say) gave them the origin too, and they must count.
	own          map[int64]*int64 // seq -> the PUT's token (its ownSeq variable)
	needsRebuild atomic.Bool      // an 'R' (TRUNCATE) was applied, or the filter filled (growWhenFull)
	wake         chan struct{}
	cancel       context.CancelFunc
	done         sync.WaitGroup

	degraded atomic.Bool  // a foreign key did not fit: the filter is bypassed
	source   atomic.Value // string: "scan", "snapshot", "rebuild" or "none"

	gets, dbReads, rejects, falsePos atomic.Int64
	puts, created, deletes, deleted  atomic.Int64
	leaked, applyErrs, rebuilds      atomic.Int64
}

// New builds the filter from the table (or from cfg.Snapshot plus the change
// log), applies the log since, and starts following it.
func New(ctx context.Context, cfg Config) (*Service, error) {
	if cfg.Store == nil {
		return nil, errors.New("no store")
	}
	if cfg.FalsePositiveRate != 0 && cfg.FingerprintBits != 0 {
		return nil, errors.New("a false-positive rate and fingerprint bits both given: give one")
	}
	if _, err := cuckoo.New(1, layoutOf(cfg)); err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 5 * time.Second
	}
	if cfg.Capacity < 0 {
		return nil, fmt.Errorf("negative capacity %d", cfg.Capacity)
	}
	s := &Service{store: cfg.Store, cfg: cfg, log: cfg.Log, wake: make(chan struct{}, 1), origin: randomID(), own: make(map[int64]*int64)}
	s.source.Store("none")
	if s.log == nil {
		s.log = log.New(io.Discard, "", 0)
	}
	if err := cfg.Store.Ping(ctx); err != nil {
		return nil, fmt.Errorf("database unreachable: %w", err)
	}
	if cfg.NoFilter {
		if cfg.Snapshot != "" {
			return nil, errors.New("a snapshot needs the filter")
		}
		return s, nil
	}
	loaded, err := s.loadSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	if !loaded {
		c, err := s.store.Conn(ctx)
		if err != nil {
			return nil, err
		}
		f, seq, err := s.scan(ctx, c)
		c.Release()
		if err != nil {
			return nil, err
		}
		s.filt.Store(f)
		s.applied.Store(seq)
		s.source.Store("scan")
	}
	// Apply what committed since the scan or snapshot before serving.
	if err := s.catchUp(ctx); err != nil {
		return nil, err
	}
	fctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.done.Add(1)
	go s.follow(fctx)
	if l, ok := cfg.Store.(listener); ok && !cfg.NoListen {
		s.done.Add(1)
		go func() {
			defer s.done.Done()
			l.Listen(fctx, cfg.PollInterval, s.poke, func(err error) { s.log.Printf("%v (retrying)", err) })
		}()
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

// filter returns the current filter (nil without one).
func (s *Service) filter() *cuckoo.Filter { return s.filt.Load() }

// scan sizes a filter from the table's row count and fills it with every
// key (InsertBatch), printing progress on long builds, and returns it with
// the change-log position of the scan.
// layoutOf is the filter layout cfg asks for: nil (New's default) unless
// it names one.
func layoutOf(cfg Config) cuckoo.Option {
	switch {
	case cfg.FalsePositiveRate != 0:
		// The rate chooses the slots per bucket too (four 12-bit slots
		// for rates from 0.186% to 0.237%).
		return cuckoo.WithFalsePositiveRate(cfg.FalsePositiveRate)
	case cfg.FingerprintBits != 0:
		return cuckoo.WithFingerprintBits(cfg.FingerprintBits)
	}
	return nil
}

func (s *Service) scan(ctx context.Context, c Conn) (*cuckoo.Filter, int64, error) {
	start := time.Now()
	lastReport := start
	var n int64
	var keys [][]byte
	var f *cuckoo.Filter
	mk := func(total int64) error {
		capa := s.cfg.Capacity
		if capa == 0 {
			capa = int(max(2*total, int64(minCapacity)))
		}
		var err error
		if f, err = cuckoo.New(capa, layoutOf(s.cfg)); err != nil {
			return fmt.Errorf("filter: %w", err)
		}
		return nil
	}
	seq, err := c.ScanKeys(ctx, func(total int64, batch []string) error {
		if f == nil {
			if err := mk(total); err != nil {
				return err
			}
		}
		keys = keys[:0]
		for _, k := range batch {
			keys = append(keys, []byte(k))
		}
		if _, err := f.InsertBatch(keys); err != nil {
			return fmt.Errorf("filter of capacity %d cannot hold the table's %d keys: %w", f.Cap(), total, err)
		}
		n += int64(len(batch))
		if now := time.Now(); now.Sub(lastReport) >= time.Second {
			lastReport = now
			s.log.Printf("building filter: %d/%d keys (%.0f%%)", n, total, 100*float64(n)/float64(max(total, 1)))
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	if f == nil {
		if err := mk(0); err != nil {
			return nil, 0, err
		}
	}
	s.log.Printf("filter built from %d keys of %s in %v: %d slots, load factor %.4f, expected false-positive rate %.4f%%",
		n, s.store.Table(), time.Since(start).Round(time.Millisecond), f.Cap(), f.LoadFactor(), 100*expectedFPR(f))
	return f, seq, nil
}

// expectedFPR is the filter's false-positive rate at its load (Stats): a
// lookup compares the fingerprint with the 2·b slots of its two buckets,
// each occupied with probability α and matching one of the 2^f-1
// fingerprints.
func expectedFPR(f *cuckoo.Filter) float64 {
	if f == nil {
		return 0
	}
	return f.Stats().FalsePositiveRate
}

// poke wakes the change-log follower without blocking.
func (s *Service) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// follow applies the change log whenever a notification arrives and at
// least every PollInterval, and rebuilds the filter after a TRUNCATE.
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
		err := s.catchUp(ctx)
		if err == nil && s.needsRebuild.Load() {
			err = s.rebuild(ctx)
		}
		if err != nil && ctx.Err() == nil {
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
	if s.filter() == nil {
		return nil
	}
	c, err := s.store.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	return s.catchUpLocked(ctx, c, math.MaxInt64)
}

// catchUpLocked applies the change-log entries after the applied position
// and below seq `before`, read through lg; applyMu is held.
//
// Claim L (the log). For every key x and every position p of the log, the
// number of rows with key x in the database state that entry p's commit
// produced is N_p(x) = #I(x) − #D(x) over the entries up to p, unless a
// TRUNCATE ('R') came before p, which removes rows without 'D' entries
// and makes N_p(x) an upper bound. Proof: the guarded table's triggers run
// in the writing transaction, whoever writes; each statement logs an 'I'
// for every row it adds and a 'D' for every row it removes (an UPDATE that
// changes keys: the old keys that are gone, the new ones that appeared; k
// is unique, so these are exactly the changes in the set of keys), so the
// entries commit if and only if the changes do. The log commits in seq
// order and one transaction's entries are consecutive (log lock, see
// Postgres; SQLite commits one writer at a time), and lg.Changes reads in
// one statement, so every batch read here is a set of whole transactions
// and p is always a committed state. (A creating PUT's catch-up reads
// through its own transaction, which would show that transaction's
// uncommitted entries; it stops below the transaction's first entry,
// Creation.First, so it too reads only committed ones.)
//
// Claim C (the copies). With p the applied position, the filter holds for
// every key x exactly copies(x) = N_p(x) + A(x), where A(x) ≥ 0 counts the
// copies this instance's PUTs inserted for entries beyond p (in flight, or
// committed and not yet passed here) plus leaked ones (a PUT whose commit's
// answer was lost). Each such copy is of the key its entry holds (the key
// as stored, Store.Put), and its entry's seq is in s.own. Proof, by
// induction over the steps that change it: a scan sets copies = N_p (A =
// 0: New runs before serving; a rebuild holds snapMu exclusively, so no
// PUT is in flight and every committed one has an entry ≤ the scan's
// position); a creating PUT adds 1 to A and its seq to own before its
// entry commits (handlePut); a PUT that certainly did not commit removes
// its copy and its seq again; and this function, moving p to p', applies
// to each key the net change fi − d, where fi counts the 'I' entries in
// (p, p'] whose seq is not in own (other writers', and any other entry
// of our PUTs' transactions), oi those whose seq is, d the 'D' entries: N
// grows by fi + oi − d, and the oi entries leave A (their copies were
// inserted before their commit) and own. Skipping by origin alone would
// miss entries a user's trigger wrote inside a PUT's transaction, which
// PostgreSQL tags with the PUT's origin (it is set for the transaction).
//
// Claim D (every Delete removes a copy that is there), while the filter is
// not degraded (no insert of a copy has failed; once one has, deletions are
// not applied). Where the net is
// negative, copies(x) = N_p + A ≥ N_p + oi ≥ d − fi, because
// N_p' = N_p + fi + oi − d ≥ 0. So Delete always finds a copy of x's own
// fingerprint in x's buckets (the library removes one copy of a present
// key), and never another key's.
//
// Claim M (no dip). All net inserts are done before any net delete, so
// while a batch is applied every key's copies move monotonically from their
// value before to their value after. A row present both at p and at p'
// (N ≥ 1 at both) is therefore never rejected during the step, even if the
// batch deletes and recreates its key (a transaction that ran DELETE x;
// INSERT x nets to zero: nothing is touched).
//
// Hence the guarantee: a row present now was created by an entry e. If
// e ≤ p, N_p(x) ≥ 1 (no 'D' of that row follows e up to p); if e > p is
// ours, A(x) ≥ 1; if e > p is another writer's, the row is in the
// propagation window until this instance applies e (README). In every case
// but the last, copies(x) ≥ 1 at every moment.
//
// An 'R' changes no copy (the truncated rows' copies stay: false positives,
// never false negatives); it asks for a rebuild from a scan (rebuild).
//
// The memory taken is one map entry per distinct key changed since the
// position: after a long outage or a bulk load, the size of that backlog.
func (s *Service) catchUpLocked(ctx context.Context, lg LogReader, before int64) error {
	f := s.filter()
	last := s.applied.Load()
	net := make(map[string]int)
	truncated := false
	var passed []int64
	err := lg.Changes(ctx, last, before, func(c Change) error {
		_, ours := s.own[c.Seq]
		switch {
		case c.Op == 'I' && ours && c.Origin == s.origin:
			passed = append(passed, c.Seq) // its copy is in already
		case c.Op == 'I':
			net[c.Key]++
		case c.Op == 'D':
			net[c.Key]--
		case c.Op == 'R':
			truncated = true
		}
		last = c.Seq
		return nil
	})
	if err != nil {
		return err // nothing applied: the position stays
	}
	var kb []byte
	for k, n := range net {
		kb = append(kb[:0], k...)
		for ; n > 0; n-- {
			if err := f.Insert(kb); err != nil && !s.degraded.Swap(true) {
				// The key cannot be guarded: stop rejecting
				// anything until a restart with a larger
				// capacity.
				s.log.Printf("filter full applying the change log (%v): the filter is bypassed until it is rebuilt larger (automatic capacity) or the service restarts with a larger -capacity", err)
				s.growWhenFull()
			}
		}
	}
	// Not while degraded: a key whose copy did not fit has none, and its
	// 'D' would remove another key's copy with the same fingerprint and
	// buckets (Claim D needs the copy to be there). The filter is bypassed
	// until it is rebuilt (or the service restarts), so the copies left
	// cost nothing; a GET that read the flag clear before it was set may
	// still be using the filter, and loses no copy it relies on.
	if s.degraded.Load() {
		net = nil
	}
	for k, n := range net {
		kb = append(kb[:0], k...)
		for ; n < 0; n++ {
			f.Delete(kb)
		}
	}
	for _, q := range passed {
		delete(s.own, q)
	}
	s.applied.Store(last)
	if truncated {
		s.needsRebuild.Store(true)
		s.poke()
	}
	return nil
}

// rebuild replaces the filter with one built from a scan of the table, after
// a TRUNCATE (whose rows' copies the log cannot remove) or when the filter
// filled up with its capacity chosen automatically (growWhenFull). It holds snapMu
// exclusively (no PUT in flight: Claim C's A is 0 after the scan) and
// applyMu (the position does not move during the scan); the scan's position
// is at least the applied one, since it starts after it was applied and the
// log commits in seq order. GETs use the old filter until the swap; it
// holds at least the copies the new one does, minus the truncated rows'.
// Lock order, as everywhere: connection, snapMu, applyMu.
func (s *Service) rebuild(ctx context.Context) error {
	c, err := s.store.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	s.snapMu.Lock()
	defer s.snapMu.Unlock()
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	if !s.needsRebuild.Load() {
		return nil
	}
	return s.rebuildLocked(ctx, c)
}

// rebuildLocked is rebuild with snapMu and applyMu held, through c.
func (s *Service) rebuildLocked(ctx context.Context, c Conn) error {
	s.needsRebuild.Store(false)
	s.log.Printf("rebuilding the filter from a scan")
	f, seq, err := s.scan(ctx, c)
	if err != nil {
		s.needsRebuild.Store(true)
		return err
	}
	if seq < s.applied.Load() {
		s.needsRebuild.Store(true)
		return fmt.Errorf("rebuild: the scan is at change %d, before the applied %d", seq, s.applied.Load())
	}
	s.filt.Store(f)
	s.applied.Store(seq)
	clear(s.own)            // no PUT in flight (snapMu): every own entry is <= seq
	s.degraded.Store(false) // after the swap: see guardedFilter
	s.source.Store("rebuild")
	s.rebuilds.Add(1)
	return nil
}

// AppliedSeq returns the last change-log seq this instance has applied.
func (s *Service) AppliedSeq() int64 { return s.applied.Load() }

// MayContain reports whether the filter would let a GET for key reach the
// database (true without a filter).
func (s *Service) MayContain(key string) bool {
	f := s.guardedFilter()
	return f == nil || f.Lookup([]byte(key))
}

// guardedFilter returns the filter GETs consult, or nil while there is none
// or it is bypassed (degraded).
//
// Claim: a filter it returns holds a copy of every row whose entry was
// applied before the call. Proof: the flag is read before the filter.
// catchUpLocked sets the flag before it advances the applied position past
// an entry whose copy did not fit, and rebuildLocked stores its new filter
// (complete up to its scan, which is past the applied position) before it
// clears the flag. So if the flag read clear, either no entry applied so
// far failed to fit into the filter read after it, or the rebuild's swap
// came before the clear the read saw, and the filter read later is the
// rebuilt one or newer. Reading the filter first could pair the degraded
// filter, which lacks the rows that did not fit, with the flag a rebuild
// cleared in between: the rows were rejected although present.
func (s *Service) guardedFilter() *cuckoo.Filter {
	if s.degraded.Load() {
		return nil
	}
	return s.filter()
}

// Stats is the JSON of /stats.
type Stats struct {
	Backend         string  `json:"backend"`
	Table           string  `json:"table"`
	Filter          bool    `json:"filter"`
	Degraded        bool    `json:"degraded"`
	BuiltFrom       string  `json:"built_from"`
	Keys            int     `json:"filter_keys"`
	Capacity        int     `json:"filter_capacity"`
	LoadFactor      float64 `json:"load_factor"`
	FingerprintBits int     `json:"fingerprint_bits"`
	SlotsPerBucket  int     `json:"slots_per_bucket"`
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
	Rebuilds        int64   `json:"rebuilds"`
}

// Stats returns the counters.
func (s *Service) Stats() Stats {
	f := s.filter()
	st := Stats{
		Backend: s.store.Backend(), Table: s.store.Table(), Filter: f != nil, Degraded: s.degraded.Load(), BuiltFrom: s.source.Load().(string),
		Gets: s.gets.Load(), DBReads: s.dbReads.Load(), Rejected: s.rejects.Load(), FalsePositives: s.falsePos.Load(),
		Puts: s.puts.Load(), Created: s.created.Load(), Deletes: s.deletes.Load(), Deleted: s.deleted.Load(),
		LeakedCopies: s.leaked.Load(), AppliedSeq: s.applied.Load(), ApplyErrors: s.applyErrs.Load(), Rebuilds: s.rebuilds.Load(),
	}
	if f != nil {
		st.Keys, st.Capacity, st.LoadFactor, st.FingerprintBits, st.SlotsPerBucket = f.Len(), f.Cap(), f.LoadFactor(), f.FingerprintBits(), f.SlotsPerBucket()
		st.ExpectedFPR = expectedFPR(f)
	}
	return st
}

// Handler returns the HTTP API: GET, PUT and DELETE /items/{key} and GET
// /stats. The key is the rest of the path after /items/, unescaped, exactly
// as sent: it may contain "/" (GET /items/a/b is key "a/b", as is GET
// /items/a%2Fb), and "//", "/./" and "/../" in it are part of the key.
// (http.ServeMux would clean such a path and redirect the request to
// another one, and a client that follows the redirect would then write or
// delete another key's row: PUT /items/a//b overwrite "a/b".)
func (s *Service) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(s.Stats())
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k, ok := strings.CutPrefix(r.URL.Path, "/items/")
		if !ok {
			mux.ServeHTTP(w, r)
			return
		}
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			s.handleGet(w, r, k)
		case http.MethodPut:
			s.handlePut(w, r, k)
		case http.MethodDelete:
			s.handleDelete(w, r, k)
		default:
			w.Header().Set("Allow", "DELETE, GET, HEAD, PUT")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		}
	})
}

// SourceHeader says who answered a GET: "filter" (rejected without a query)
// or "db".
const SourceHeader = "X-Cacheguard-Source"

// checkKey answers 400 and reports false when k is not a valid key.
func checkKey(w http.ResponseWriter, k string) bool {
	if err := CheckKey(k); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

// dbError logs err and answers 503 with a generic message: the error may
// name the database's host, user and database, which are not the
// client's business.
func (s *Service) dbError(w http.ResponseWriter, err error) {
	s.log.Print(err)
	http.Error(w, "database unavailable", http.StatusServiceUnavailable)
}

func (s *Service) handleGet(w http.ResponseWriter, r *http.Request, k string) {
	if !checkKey(w, k) {
		return
	}
	s.gets.Add(1)
	f := s.guardedFilter()
	guarded := f != nil
	if guarded && !f.Lookup([]byte(k)) {
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
// filter. Why no GET can be rejected while the row is present (Claim C of
// catchUpLocked counts the copies this inserts as A):
//
//   - The key goes into the filter inside the transaction, before the
//     commit makes the row visible (Store.Put calls created between the
//     write and the commit). From the moment any reader can see the row, the
//     filter holds the key.
//   - Whether the row is new is decided inside the transaction (SQLite: the
//     write lock is taken at BEGIN; PostgreSQL: INSERT ... ON CONFLICT holds
//     the row lock), so of several concurrent PUTs of one new key exactly
//     one inserts a copy.
//   - The trigger logs the new row's 'I' like any other write, but with this
//     instance's origin, and catchUpLocked skips that entry (its seq is
//     recorded in own): the copy inserted here, of the key as the database
//     stored it, is the row's one copy, never a second one. Writes of any
//     other client, and other entries of the PUT's transaction, are
//     applied.
//   - Deletions reach the filter only through the change log. Before adding
//     its copy, the PUT therefore applies the log up to its transaction's
//     first entry (the transaction holds the log lock, so every entry
//     before it is final), reading it through its own transaction; its
//     transaction's entries, the row's and any a user's trigger wrote,
//     wait for the follower, after the commit. The deletion of the key's
//     previous row is among the entries applied, so its copy is gone
//     before the new one is added. Without this, a key deleted and recreated faster
//     than the follower applied the deletions gained a copy per round until
//     its two buckets (2 × SlotsPerBucket slots) were full of it, and the
//     next PUT got ErrFull although the filter was nearly empty.
//   - If the transaction fails after the insert and certainly did not
//     commit, the row never became visible and the copy is removed again
//     (Delete of a key we inserted removes one copy of its fingerprint, so
//     any other copy stays). If the commit's answer was lost
//     (MaybeCommitted), the copy stays: if the row exists it is needed; if
//     not, it only costs false positives (counted as leaked_copies).
//   - If the filter is full, nothing is written (503): a row that could
//     not be guarded is never created.
//   - An update of an existing row logs nothing and does not touch the
//     filter.
//   - snapMu is held shared from before the insert to the end of the
//     transaction: a snapshot or a rebuild never sees a copy in flight, and
//     the filter is not replaced under the PUT.
//
// A GET that overlaps the PUT may miss the row only while it is not yet
// committed, which a reader of the database would see as absent too.
func (s *Service) handlePut(w http.ResponseWriter, r *http.Request, k string) {
	if !checkKey(w, k) {
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
	s.snapMu.RLock()
	snapHeld := true
	defer func() {
		if snapHeld {
			s.snapMu.RUnlock()
		}
	}()
	f := s.filter() // not replaced while snapMu is held
	var kb []byte   // the key copied into the filter, as the database stored it
	var ownSeq int64
	inserted := false
	created := func(c Creation) error {
		if f == nil {
			return nil
		}
		s.applyMu.Lock()
		defer s.applyMu.Unlock()
		// Up to the transaction's own entries, not into them: they are
		// not committed, and a failed commit would take them back after
		// they were applied (a 'D' a user's trigger wrote would leave
		// its row present without its copy).
		if err := s.catchUpLocked(ctx, c.Log, c.First); err != nil {
			return err
		}
		kb = []byte(c.Key)
		if err := f.Insert(kb); err != nil {
			return ErrFilterFull
		}
		inserted, ownSeq = true, c.Seq
		s.own[c.Seq] = &ownSeq
		return nil
	}
	isNew, outcome, err := s.store.Put(ctx, k, val, s.origin, created)
	if err != nil {
		if inserted {
			if outcome == NotCommitted {
				// The entry never commits: neither its copy nor
				// its seq stays.
				s.applyMu.Lock()
				if s.own[ownSeq] == &ownSeq { // not a later PUT's reusing the seq
					delete(s.own, ownSeq)
				}
				s.applyMu.Unlock()
				f.Delete(kb)
			} else {
				s.leaked.Add(1)
			}
		}
		if errors.Is(err, ErrFilterFull) {
			s.log.Print(err)
			s.growWhenFull()
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		s.dbError(w, err)
		return
	}
	if isNew {
		s.created.Add(1)
		// The transaction's other entries (rows a user's trigger wrote
		// in it) were left to the follower: apply them before answering,
		// as rows this instance created are promised at once. The
		// transaction is over, so snapMu goes first: catchUp takes a
		// connection, which comes before snapMu in the lock order.
		if inserted {
			s.snapMu.RUnlock()
			snapHeld = false
			if err := s.catchUp(ctx); err != nil {
				s.log.Printf("applying the change log after a PUT: %v (the follower retries)", err)
				s.poke()
			}
		}
		w.WriteHeader(http.StatusCreated)
		return
	}
	// An overwrite of a row this instance has not applied yet (written
	// around the service, its 'I' still in the log): apply the log before
	// answering, so that the writer reads its row back at once, as after a
	// 201. The row's entry committed before this transaction found the
	// row. A copy already there costs nothing more.
	if f != nil && !f.Lookup([]byte(k)) {
		s.snapMu.RUnlock()
		snapHeld = false
		if err := s.catchUp(ctx); err != nil {
			s.log.Printf("applying the change log after a PUT: %v (the follower retries)", err)
			s.poke()
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleDelete deletes the row; its copy leaves the filter through the
// change log, like every deletion. Why no GET can be rejected while the row
// is present:
//
//   - The trigger logs the 'D' in the deleting transaction, so the entry
//     exists if and only if the row is gone, and catchUpLocked applies it
//     (Claims C and D): the copy removed is one that is there, after the
//     deletion committed.
//   - If the database fails (before or at the commit), nothing is applied
//     that did not commit: if the row survived, its copy is still there; if
//     it was deleted, the log has the 'D' and the follower applies it.
//   - Concurrent PUT and DELETE of one key: the database orders them, the
//     log records that order, and the entries are applied in it.
//
// After a successful delete the handler applies the log at once, so that
// the key is rejected again without waiting for the follower; if that
// fails, the follower applies it later (a stale copy costs false positives
// only).
//
// The one gap left is the library's documented corner: two different keys
// with the same fingerprint and buckets, one inserted and the other deleted
// during a single Lookup of the first (a probability of order 2^-f per pair
// times the chance of that overlap).
func (s *Service) handleDelete(w http.ResponseWriter, r *http.Request, k string) {
	if !checkKey(w, k) {
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
	if err := s.catchUp(ctx); err != nil {
		s.log.Printf("applying the change log after a delete: %v (the follower retries)", err)
		s.poke()
	}
	w.WriteHeader(http.StatusNoContent)
}
