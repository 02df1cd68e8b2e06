package main

// The bench subcommand: throughput of this filter's modes next to the exact
// set people use instead (a Go map under a sync.RWMutex) and the memory
// ceiling of a two-bucket lookup, on in-memory structures, with no setup.
//
// The runner is adapted from the comparison module's generic runner
// (bench/compare/runner.go) without its competitors: keys are 8-byte
// counters written into a per-goroutine buffer instead of a pre-generated
// key array, and allocations are counted around every timed part.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/seed25b00da8/cuckoo"
)

func init() {
	commands["bench"] = command{
		synopsis: "[-sizes LIST] [-goroutines LIST] [-modes LIST] [-bits LIST] [-impls LIST] [-workloads LIST] [-duration D] [-reps N] [-svg FILE] [-progress]",
		summary:  "measure throughput of in-memory filters against a locked map and a memory probe",
		run:      runBench,
	}
}

// Workload names one measured operation mix.
type workload string

// The workloads, in the order they run and print.
const (
	// wFill inserts n keys into an empty structure sized for n keys: from
	// 0 to 95% of a cuckoo filter's slots.
	wFill workload = "fill"
	// wLookupPos looks up inserted keys.
	wLookupPos workload = "lookup-pos"
	// wLookupNeg looks up keys that were never inserted; the hits are
	// false positives.
	wLookupNeg workload = "lookup-neg"
	// wMixed runs 90% lookups of inserted keys, 5% deletes and 5% inserts
	// on a structure holding mixedFill(n) keys (90% of a cuckoo filter's
	// slots): every delete removes a key of the goroutine's own stride and
	// the insert 10 operations later puts it back, so the load stays put.
	wMixed workload = "mixed"
)

var allWorkloads = []workload{wFill, wLookupPos, wLookupNeg, wMixed}

// mixedFill returns the number of keys held during the mixed workload: 90%
// of the slots of a filter sized for n keys at 95% load.
func mixedFill(n int) int { return int(int64(n) * 18 / 19) }

// negBit marks the counters of negative keys, which are never inserted.
const negBit = 1 << 63

// Implementation kinds, as selected by -impls.
const (
	kindCuckoo = "cuckoo" // Insert, Lookup, Delete of this filter
	kindBatch  = "batch"  // the same filter, fills through InsertBatch and lookups through LookupBatch
	kindMap    = "map"    // map[uint64]struct{} under a sync.RWMutex
	kindProbe  = "probe"  // two random loads per op from a bucket-sized table
)

var allKinds = []string{kindCuckoo, kindBatch, kindMap, kindProbe}

// target is what the workloads run on.
type target interface {
	Insert(key []byte) error
	Lookup(key []byte) bool
	Delete(key []byte) bool
}

// batcher is implemented by targets with batched lookups and inserts.
type batcher interface {
	LookupBatch(keys [][]byte, found []bool) int
	InsertBatch(keys [][]byte) (int, error)
}

// A structure is one implementation that is built and filled: cuckoo
// filters (with or without their batch row), the map, the probe.
type structure struct {
	name  string // row name of the plain row
	kind  string // kindCuckoo, kindMap or kindProbe
	desc  string
	mode  cuckoo.Mode
	fbits int
	batch bool // also run the fills through InsertBatch and the lookups through LookupBatch (name + "-batch")
	plain bool // run the plain rows (false: only the batch rows were asked for)
}

// newTarget returns an empty instance for n keys.
func (s structure) newTarget(n int) (target, error) {
	switch s.kind {
	case kindCuckoo:
		return cuckoo.New(n, cuckoo.WithMode(s.mode), cuckoo.WithFingerprintBits(s.fbits))
	case kindMap:
		return &lockedMap{m: make(map[uint64]struct{}, n)}, nil
	case kindProbe:
		return newProbe(filterBuckets(n)), nil
	}
	return nil, fmt.Errorf("unknown implementation kind %q", s.kind)
}

// refName is the row every ratio is relative to.
const refName = "lockfree-f12"

func cuckooName(mode cuckoo.Mode, fbits int) string { return fmt.Sprintf("%v-f%d", mode, fbits) }

// structures lists the implementations selected by the flags, in row order.
func structures(modes []cuckoo.Mode, fbits []int, kinds map[string]bool) []structure {
	var out []structure
	if kinds[kindCuckoo] || kinds[kindBatch] {
		for _, m := range modes {
			for _, b := range fbits {
				out = append(out, structure{
					name: cuckooName(m, b), kind: kindCuckoo, mode: m, fbits: b,
					batch: kinds[kindBatch], plain: kinds[kindCuckoo],
					desc: fmt.Sprintf("this filter, %v mode, %d-bit fingerprints (-batch: fills through InsertBatch, lookups through LookupBatch, 16 keys a call)", m, b),
				})
			}
		}
	}
	if kinds[kindMap] {
		out = append(out, structure{name: "map-rwmutex", kind: kindMap, plain: true,
			desc: "map[uint64]struct{} keyed by xxhash.Sum64(key), pre-sized for n, under a sync.RWMutex (exact)"})
	}
	if kinds[kindProbe] {
		out = append(out, structure{name: "probe", kind: kindProbe, plain: true,
			desc: "memory probe: two independent random 8-byte loads per op from a []uint64 of the filter's bucket count (ceiling of a two-bucket lookup)"})
	}
	return out
}

// lockedMap is the exact set people use instead of a filter.
type lockedMap struct {
	mu sync.RWMutex // guards m
	m  map[uint64]struct{}
}

func (m *lockedMap) Insert(key []byte) error {
	h := xxhash.Sum64(key)
	m.mu.Lock()
	m.m[h] = struct{}{}
	m.mu.Unlock()
	return nil
}

func (m *lockedMap) Lookup(key []byte) bool {
	h := xxhash.Sum64(key)
	m.mu.RLock()
	_, ok := m.m[h]
	m.mu.RUnlock()
	return ok
}

func (m *lockedMap) Delete(key []byte) bool {
	h := xxhash.Sum64(key)
	m.mu.Lock()
	_, ok := m.m[h]
	delete(m.m, h)
	m.mu.Unlock()
	return ok
}

// filterBuckets returns the number of buckets cuckoo.New(n) allocates: n/0.95
// slots rounded up to whole four-slot buckets (checked against Cap in the
// tests).
func filterBuckets(n int) int {
	slots := (n*20 + 18) / 19
	return (slots + 3) / 4
}

// probe is the ceiling for a two-bucket lookup: per operation two
// independent random 8-byte loads from one uint64 per bucket of the filter.
// The indices come from the key's counter through a cheap mixer (no full
// hash). Insert and Delete do the same loads and write nothing.
type probe struct {
	t []uint64
}

func newProbe(words int) *probe {
	t := make([]uint64, max(words, 1))
	// Write every word: untouched pages all map the zero page and never
	// miss the cache.
	x := uint64(0x2545F4914F6CDD1D)
	for i := range t {
		x = xorshift(x)
		t[i] = x
	}
	return &probe{t: t}
}

func xorshift(x uint64) uint64 {
	x ^= x << 13
	x ^= x >> 7
	x ^= x << 17
	return x
}

// mix64 is the finalizer of MurmurHash3: it spreads a counter over 64 bits.
func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

func (p *probe) load(key []byte) bool {
	x := mix64(binary.LittleEndian.Uint64(key))
	m := uint64(len(p.t))
	i1, _ := bits.Mul64(x, m)
	i2, _ := bits.Mul64(xorshift(x), m)
	return p.t[i1]&p.t[i2] == 1 // almost never true; the loads are what counts
}

func (p *probe) Insert(key []byte) error { p.load(key); return nil }
func (p *probe) Lookup(key []byte) bool  { return p.load(key) }
func (p *probe) Delete(key []byte) bool  { p.load(key); return true }

// result is what one timed run did.
type result struct {
	ops          int64
	hits         int64 // lookups that returned true
	insertFailed int64
	deleteMissed int64
	mallocs      uint64 // runtime.MemStats.Mallocs growth over the timed part
	elapsed      time.Duration
}

func (r *result) add(s result) {
	r.ops += s.ops
	r.hits += s.hits
	r.insertFailed += s.insertFailed
	r.deleteMissed += s.deleteMissed
	r.mallocs += s.mallocs
	r.elapsed += s.elapsed
}

func (r result) mops() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.ops) / r.elapsed.Seconds() / 1e6
}

// block is how many operations a worker does between checks of the stop
// flag.
const block = 64

// batchLen is the number of keys per LookupBatch and InsertBatch call.
const batchLen = 16

// workerState is one goroutine's memory, allocated before the timed part so
// the loops allocate nothing.
type workerState struct {
	key   []byte   // 8 bytes: the current key's counter, little-endian
	keys  []byte   // batchLen keys back to back, for LookupBatch and InsertBatch
	batch [][]byte // views of keys
	found []bool
}

func newWorkerState() *workerState {
	w := &workerState{
		key:   make([]byte, 8),
		keys:  make([]byte, 8*batchLen),
		batch: make([][]byte, batchLen),
		found: make([]bool, batchLen),
	}
	for i := range w.batch {
		w.batch[i] = w.keys[8*i : 8*i+8 : 8*i+8]
	}
	return w
}

// job describes one timed run: workload w on t with g goroutines. The
// structure holds keys 0..filled-1 (for wFill it is empty and keys
// 0..n-1 are inserted).
type job struct {
	t      target
	w      workload
	batch  bool // fills through InsertBatch, lookups through LookupBatch
	g      int
	n      int // keys of the size (fill inserts n; negative lookups walk n)
	filled int
	d      time.Duration // how long to run; fills ignore it and run to the end
}

// run runs j once. The goroutines are started and their memory allocated
// before the clock and the allocation count start.
func (j job) run() result {
	g := max(j.g, 1)
	var stop atomic.Bool
	res := make([]result, g)
	work := make([]func() result, g)
	var bt batcher
	if j.batch {
		bt = j.t.(batcher)
	}
	for i := range g {
		ws := newWorkerState()
		switch j.w {
		case wFill:
			if j.batch {
				work[i] = func() result { return fillBatchWorker(bt, ws, uint64(i), uint64(g), uint64(j.n)) }
			} else {
				work[i] = func() result { return fillWorker(j.t, ws, uint64(i), uint64(g), uint64(j.n)) }
			}
		case wLookupPos, wLookupNeg:
			n, base := j.filled, uint64(0)
			if j.w == wLookupNeg {
				n, base = j.n, negBit
			}
			start := uint64(n * i / g)
			if j.batch {
				work[i] = func() result { return batchWorker(bt, ws, base, start, uint64(n), &stop) }
			} else {
				work[i] = func() result { return lookupWorker(j.t, ws, base, start, uint64(n), &stop) }
			}
		case wMixed:
			start := uint64(j.filled * i / g)
			work[i] = func() result {
				return mixedWorker(j.t, ws, uint64(i), uint64(g), uint64(j.filled), start, &stop)
			}
		default:
			panic("bench: unknown workload " + string(j.w))
		}
	}
	var ready, done sync.WaitGroup
	begin := make(chan struct{})
	ready.Add(g)
	done.Add(g)
	for i := range g {
		go func() {
			defer done.Done()
			ready.Done()
			<-begin
			res[i] = work[i]()
		}()
	}
	ready.Wait()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	mallocs := ms.Mallocs
	t0 := time.Now()
	close(begin)
	if j.w != wFill {
		time.Sleep(j.d)
		stop.Store(true)
	}
	done.Wait()
	elapsed := time.Since(t0)
	runtime.ReadMemStats(&ms)
	var total result
	for _, r := range res {
		total.add(r)
	}
	total.elapsed = elapsed
	total.mallocs = ms.Mallocs - mallocs
	return total
}

// fillWorker inserts keys first, first+step, ... below end.
func fillWorker(t target, ws *workerState, first, step, end uint64) (r result) {
	key := ws.key
	for k := first; k < end; k += step {
		binary.LittleEndian.PutUint64(key, k)
		if t.Insert(key) != nil {
			r.insertFailed++
		}
		r.ops++
	}
	return r
}

// fillBatchWorker is fillWorker through InsertBatch, batchLen keys a call. A
// key that does not fit is counted as failed and the keys after it in its
// batch are inserted by the next call.
func fillBatchWorker(t batcher, ws *workerState, first, step, end uint64) (r result) {
	for k := first; k < end; {
		n := 0
		for ; n < batchLen && k < end; n, k = n+1, k+step {
			binary.LittleEndian.PutUint64(ws.batch[n], k)
		}
		for b := ws.batch[:n]; len(b) > 0; {
			done, err := t.InsertBatch(b)
			b = b[done:]
			if err != nil {
				r.insertFailed++
				b = b[1:]
			}
		}
		r.ops += int64(n)
	}
	return r
}

// lookupWorker looks up keys base|0 .. base|n-1 cyclically from start until
// stopped. Every goroutine walks all the keys: with many goroutines, each
// cycling through a small share would find it in the cache.
func lookupWorker(t target, ws *workerState, base, start, n uint64, stop *atomic.Bool) (r result) {
	if n == 0 {
		return r
	}
	key, k := ws.key, start%n
	for !stop.Load() {
		for range block {
			binary.LittleEndian.PutUint64(key, base|k)
			if t.Lookup(key) {
				r.hits++
			}
			if k++; k == n {
				k = 0
			}
		}
		r.ops += block
	}
	return r
}

// batchWorker is lookupWorker through LookupBatch, batchLen keys a call.
func batchWorker(t batcher, ws *workerState, base, start, n uint64, stop *atomic.Bool) (r result) {
	if n == 0 {
		return r
	}
	k := start % n
	for !stop.Load() {
		for range block / batchLen {
			for i := range batchLen {
				binary.LittleEndian.PutUint64(ws.keys[8*i:], base|k)
				if k++; k == n {
					k = 0
				}
			}
			t.LookupBatch(ws.batch, ws.found)
			for _, ok := range ws.found {
				if ok {
					r.hits++
				}
			}
		}
		r.ops += block
	}
	return r
}

// mixedWorker repeats blocks of 20 operations: delete key d, 9 lookups,
// insert d back, 9 lookups. The keys d are the goroutine's own stride of the
// n inserted keys (first, first+step, ...); the lookups walk all n keys from
// start. The stop flag is checked between whole blocks, so no key stays
// deleted.
func mixedWorker(t target, ws *workerState, first, step, n, start uint64, stop *atomic.Bool) (r result) {
	if first >= n {
		return r
	}
	key, d, l := ws.key, first, start%n
	for !stop.Load() {
		for range 3 {
			binary.LittleEndian.PutUint64(key, d)
			if !t.Delete(key) {
				r.deleteMissed++
			}
			for range 9 {
				binary.LittleEndian.PutUint64(key, l)
				if t.Lookup(key) {
					r.hits++
				}
				if l++; l == n {
					l = 0
				}
			}
			binary.LittleEndian.PutUint64(key, d)
			if t.Insert(key) != nil {
				r.insertFailed++
			}
			for range 9 {
				binary.LittleEndian.PutUint64(key, l)
				if t.Lookup(key) {
					r.hits++
				}
				if l++; l == n {
					l = 0
				}
			}
			if d += step; d >= n {
				d = first
			}
		}
		r.ops += 60
	}
	return r
}

// size is a key count with the name it was given on the command line.
type size struct {
	name string
	n    int
}

// benchConfig is what the flags select.
type benchConfig struct {
	sizes      []size
	goroutines []int
	modes      []cuckoo.Mode
	bits       []int
	kinds      map[string]bool
	workloads  []workload
	duration   time.Duration // per cell
	reps       int           // a lookup or mixed cell is reps runs of duration/reps; its rate is their median
	progress   io.Writer     // nil: no progress bar
}

// row is one measured cell: impl x workload x size x goroutines.
type row struct {
	impl       string
	workload   workload
	size       size
	g          int
	mops       float64 // median over the repetitions
	mopsMin    float64
	mopsMax    float64
	reps       int
	ops        int64
	ratio      float64 // mops over the reference row's; 0: no reference
	allocs     float64 // mallocs per operation
	bitsPerKey float64 // < 0: unknown
	load       float64 // < 0: not a filter
	fpr        float64 // < 0: not reported
	notes      []string
}

// benchReport is everything run measured.
type benchReport struct {
	cfg     benchConfig
	structs []structure
	rows    []row
	header  []string
}

// rowNames returns the row names in table order: each cuckoo row followed by
// its batch row, then the map and the probe.
func (r *benchReport) rowNames() []string {
	var names []string
	for _, s := range r.structs {
		if s.plain {
			names = append(names, s.name)
		}
		if s.batch {
			names = append(names, s.name+"-batch")
		}
	}
	return names
}

// plan counts the cells that will be measured, for the progress bar.
func plan(cfg benchConfig, structs []structure) int {
	want := wantSet(cfg.workloads)
	cells := 0
	for _, s := range structs {
		per := 0
		for _, w := range allWorkloads {
			if !want[w] {
				continue
			}
			if s.plain {
				per++
			}
			if s.batch && (w == wFill || w == wLookupPos || w == wLookupNeg) {
				per++
			}
		}
		cells += per
	}
	return cells * len(cfg.sizes) * len(cfg.goroutines)
}

func wantSet(ws []workload) map[workload]bool {
	m := map[workload]bool{}
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// progressBar draws "[####....] done/total  ETA  what": redrawn in place on
// a terminal, one line per cell elsewhere.
type progressBar struct {
	w     io.Writer
	tty   bool
	total int
	done  int
	start time.Time
}

func (p *progressBar) step(what string) {
	if p == nil || p.w == nil {
		return
	}
	const width = 30
	fill := width * p.done / max(p.total, 1)
	eta := "--"
	if p.done > 0 {
		el := time.Since(p.start)
		rest := el * time.Duration(p.total-p.done) / time.Duration(p.done)
		eta = rest.Round(time.Second).String()
	}
	line := fmt.Sprintf("[%s%s] %d/%d cells, ETA %-6s %s", strings.Repeat("#", fill), strings.Repeat(".", width-fill), p.done, p.total, eta, what)
	if p.tty {
		fmt.Fprintf(p.w, "\r%-100.100s", line)
	} else {
		fmt.Fprintln(p.w, line)
	}
}

func (p *progressBar) finish() {
	if p == nil || p.w == nil {
		return
	}
	p.step("done")
	if p.tty {
		fmt.Fprintln(p.w)
	}
}

// heapAlloc returns the live heap after a collection.
func heapAlloc() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// runBenchConfig measures every selected cell. Structures are measured one
// at a time and dropped before the next, so only one large table is alive.
func runBenchConfig(cfg benchConfig) *benchReport {
	rep := &benchReport{cfg: cfg, structs: structures(cfg.modes, cfg.bits, cfg.kinds)}
	bar := &progressBar{w: cfg.progress, tty: isTerminal(cfg.progress), total: plan(cfg, rep.structs), start: time.Now()}
	want := wantSet(cfg.workloads)
	for _, sz := range cfg.sizes {
		for _, s := range rep.structs {
			rep.rows = append(rep.rows, measure(cfg, sz, s, want, bar)...)
			runtime.GC()
		}
	}
	bar.finish()
	rep.computeRatios()
	return rep
}

// loadOf returns t's load factor, or -1 if t is not a filter.
func loadOf(t target) float64 {
	if f, ok := t.(*cuckoo.Filter); ok {
		return float64(f.Len()) / float64(f.Cap())
	}
	return -1
}

// measure runs every selected workload of one structure at one size.
func measure(cfg benchConfig, sz size, s structure, want map[workload]bool, bar *progressBar) []row {
	var rows []row
	n := sz.n
	newRow := func(name string, w workload, g int, runs []result) row {
		var total result
		rates := make([]float64, len(runs))
		for i, r := range runs {
			total.add(r)
			rates[i] = r.mops()
		}
		slices.Sort(rates)
		r := row{
			impl: name, workload: w, size: sz, g: g,
			mops: median(rates), mopsMin: rates[0], mopsMax: rates[len(rates)-1],
			reps: len(runs), ops: total.ops, load: -1, fpr: -1, bitsPerKey: -1,
		}
		if total.ops > 0 {
			r.allocs = float64(total.mallocs) / float64(total.ops)
		}
		if total.insertFailed > 0 {
			r.notes = append(r.notes, fmt.Sprintf("%d inserts failed", total.insertFailed))
		}
		if total.deleteMissed > 0 && s.kind != kindProbe {
			r.notes = append(r.notes, fmt.Sprintf("%d deletes missed", total.deleteMissed))
		}
		if w == wLookupNeg && s.kind != kindProbe && total.ops > 0 {
			r.fpr = float64(total.hits) / float64(total.ops)
		}
		if w == wLookupPos && s.kind != kindProbe && total.hits != total.ops {
			r.notes = append(r.notes, fmt.Sprintf("FALSE NEGATIVES: %d of %d lookups missed", total.ops-total.hits, total.ops))
		}
		if r.mopsMin > 0 && r.mopsMax > 1.5*r.mopsMin {
			r.notes = append(r.notes, fmt.Sprintf("unstable: runs %.2f..%.2f", r.mopsMin, r.mopsMax))
		}
		return r
	}
	timed := func(t target, w workload, batch bool, g, filled int) []result {
		runs := make([]result, max(cfg.reps, 1))
		for i := range runs {
			runtime.GC()
			runs[i] = job{t: t, w: w, batch: batch, g: g, n: n, filled: filled, d: cfg.duration / time.Duration(len(runs))}.run()
		}
		return runs
	}
	label := func(name string, w workload, g int) string {
		return fmt.Sprintf("%s %s n=%s g=%d", name, w, sz.name, g)
	}

	// Fill: a fresh structure per run until the duration is spent (at least
	// one run); the rate is the median run's. The batch row fills through
	// InsertBatch.
	var t target
	var fillRows []row
	fill := func(name string, batch bool) *row {
		for _, g := range cfg.goroutines {
			bar.step(label(name, wFill, g))
			var runs []result
			var spent time.Duration
			load := 1.0
			for len(runs) == 0 || spent < cfg.duration {
				t = nil
				runtime.GC()
				var err error
				if t, err = s.newTarget(n); err != nil {
					r := errorRow(name, wFill, sz, g, err)
					return &r
				}
				r := job{t: t, w: wFill, batch: batch, g: g, n: n}.run()
				runs = append(runs, r)
				spent += r.elapsed
				if l := loadOf(t); l >= 0 {
					load = min(load, l)
				}
			}
			r := newRow(name, wFill, g, runs)
			if loadOf(t) >= 0 {
				r.load = load
			}
			fillRows = append(fillRows, r)
			bar.done++
		}
		return nil
	}
	if want[wFill] && s.plain {
		if e := fill(s.name, false); e != nil {
			return append(rows, *e)
		}
	}
	if want[wFill] && s.batch {
		if e := fill(s.name+"-batch", true); e != nil {
			return append(rows, *e)
		}
	}

	// The structure the lookups run on, filled by one goroutine, and its
	// size: the table for the filters and the probe, the heap growth for
	// the map.
	t = nil
	h0 := heapAlloc()
	t, err := s.newTarget(n)
	if err != nil {
		return append(rows, errorRow(s.name, wFill, sz, 0, err))
	}
	job{t: t, w: wFill, g: 1, n: n}.run()
	bitsPerKey := 8 * float64(heapAlloc()-h0) / float64(n)
	switch s.kind {
	case kindCuckoo:
		bitsPerKey = 64 * float64(t.(*cuckoo.Filter).Cap()/4) / float64(n)
	case kindProbe:
		bitsPerKey = 64 * float64(len(t.(*probe).t)) / float64(n)
	}
	for i := range fillRows {
		fillRows[i].bitsPerKey = bitsPerKey
	}
	rows = append(rows, fillRows...)
	finish := func(r row) row {
		r.bitsPerKey = bitsPerKey
		if l := loadOf(t); l >= 0 && r.load < 0 {
			r.load = l
		}
		return r
	}

	for _, w := range []workload{wLookupPos, wLookupNeg} {
		if !want[w] {
			continue
		}
		for _, g := range cfg.goroutines {
			if s.plain {
				bar.step(label(s.name, w, g))
				rows = append(rows, finish(newRow(s.name, w, g, timed(t, w, false, g, n))))
				bar.done++
			}
			if s.batch {
				name := s.name + "-batch"
				bar.step(label(name, w, g))
				rows = append(rows, finish(newRow(name, w, g, timed(t, w, true, g, n))))
				bar.done++
			}
		}
	}

	if want[wMixed] && s.plain {
		t = nil
		runtime.GC()
		if t, err = s.newTarget(n); err != nil {
			return append(rows, errorRow(s.name, wMixed, sz, 0, err))
		}
		fill := mixedFill(n)
		job{t: t, w: wFill, g: 1, n: fill}.run()
		for _, g := range cfg.goroutines {
			bar.step(label(s.name, wMixed, g))
			rows = append(rows, finish(newRow(s.name, wMixed, g, timed(t, wMixed, false, g, fill))))
			bar.done++
		}
	}
	runtime.KeepAlive(t)
	return rows
}

func errorRow(name string, w workload, sz size, g int, err error) row {
	return row{impl: name, workload: w, size: sz, g: g, load: -1, fpr: -1, bitsPerKey: -1,
		notes: []string{"not run: " + trimPrefix(err)}}
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// computeRatios sets every row's ratio to the reference row of the same
// size, workload and goroutine count.
func (r *benchReport) computeRatios() {
	type key struct {
		size string
		w    workload
		g    int
	}
	ref := map[key]float64{}
	for _, x := range r.rows {
		if x.impl == refName {
			ref[key{x.size.name, x.workload, x.g}] = x.mops
		}
	}
	for i := range r.rows {
		x := &r.rows[i]
		if m := ref[key{x.size.name, x.workload, x.g}]; m > 0 && x.mops > 0 {
			x.ratio = x.mops / m
		}
	}
}

// sortedRows returns the rows in table order: size, workload, goroutines,
// then implementation.
func (r *benchReport) sortedRows() []row {
	order := func(list []string, s string) int { return slices.Index(list, s) }
	names := r.rowNames()
	var sizes []string
	for _, s := range r.cfg.sizes {
		sizes = append(sizes, s.name)
	}
	rows := slices.Clone(r.rows)
	slices.SortStableFunc(rows, func(a, b row) int {
		if c := order(sizes, a.size.name) - order(sizes, b.size.name); c != 0 {
			return c
		}
		if c := slices.Index(allWorkloads, a.workload) - slices.Index(allWorkloads, b.workload); c != 0 {
			return c
		}
		if c := a.g - b.g; c != 0 {
			return c
		}
		return order(names, a.impl) - order(names, b.impl)
	})
	return rows
}

// cpuModel returns the processor's name: /proc/cpuinfo's "model name" on
// Linux, else the architecture.
func cpuModel() string {
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				if v = strings.TrimSpace(v); v != "" {
					return v
				}
			}
		}
	}
	return runtime.GOARCH
}

// loadAvg returns the 1-minute load average, or -1.
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}

// machineHeader returns the lines describing where the run happens.
func machineHeader() []string {
	return []string{
		"cpu: " + cpuModel(),
		fmt.Sprintf("goos/goarch: %s/%s  GOMAXPROCS: %d  NumCPU: %d  go: %s",
			runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.NumCPU(), runtime.Version()),
		fmt.Sprintf("rtm elision: %v (cuckoo.RTMActive)", cuckoo.RTMActive()),
	}
}

// writeText prints the header and the table.
func (r *benchReport) writeText(w io.Writer) error {
	cfg := r.cfg
	fmt.Fprintln(w, "# cuckoo bench")
	for _, h := range r.header {
		fmt.Fprintln(w, h)
	}
	fmt.Fprintf(w, "%v per cell: lookups and mixed = median of %d runs of %v; fill = median of whole fills into fresh structures\n",
		cfg.duration, max(cfg.reps, 1), cfg.duration/time.Duration(max(cfg.reps, 1)))
	fmt.Fprintln(w, "keys: 8-byte little-endian counters, each goroutine inserts/deletes its own stride, lookups walk all keys")
	fmt.Fprintln(w, "fill = inserts from 0 to 95% load (n keys); mixed = 90% lookup/5% delete/5% re-insert at 90% load")
	fmt.Fprintf(w, "ratio = Mops/s over %s's in the same size, workload and goroutines; allocs/op from runtime.MemStats.Mallocs\n", refName)
	fmt.Fprintln(w, "bits/key = table bits over n (map: heap growth); load = Len/Cap after the cell; FPR = hits of lookup-neg")
	for _, s := range r.structs {
		fmt.Fprintf(w, "  %-14s %s\n", s.name, s.desc)
	}
	fmt.Fprintln(w)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "impl\tworkload\tsize\tgoroutines\tMops/s\tratio\tallocs/op\tbits/key\tload\tFPR\t  notes\t\n")
	for _, x := range r.sortedRows() {
		ratio := "-"
		if x.ratio > 0 {
			ratio = fmt.Sprintf("%.2f", x.ratio)
		}
		bpk := "-"
		if x.bitsPerKey >= 0 {
			bpk = fmt.Sprintf("%.1f", x.bitsPerKey)
		}
		load := "-"
		if x.load >= 0 {
			load = fmt.Sprintf("%.1f%%", 100*x.load)
		}
		fpr := "-"
		if x.fpr >= 0 {
			fpr = fmt.Sprintf("%.3f%%", 100*x.fpr)
		}
		allocs := "-"
		if x.reps > 0 {
			allocs = formatAllocs(x.allocs)
		}
		mops := "-"
		if x.reps > 0 {
			mops = fmt.Sprintf("%.2f", x.mops)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t  %s\t\n", x.impl, x.workload, x.size.name, x.g,
			mops, ratio, allocs, bpk, load, fpr, strings.Join(x.notes, "; "))
	}
	return tw.Flush()
}

// formatAllocs prints allocations per operation to two decimals, like the
// go test -benchmem column but not truncated to an integer: a structure that
// allocates once per call shows 1.00, while one-off growth of a filter's
// internal pools and the runtime's own allocations during the timed part
// (new threads, GC workers), amortized over the cell, show as 0.00.
func formatAllocs(a float64) string { return fmt.Sprintf("%.2f", a) }

// parseSizes parses a comma-separated list such as "1M,32M" or "10k" (k, K
// = 2^10, M = 2^20, G = 2^30).
func parseSizes(s string) ([]size, error) {
	var out []size
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		mul, num := 1, f
		switch f[len(f)-1] {
		case 'k', 'K':
			mul, num = 1<<10, f[:len(f)-1]
		case 'M':
			mul, num = 1<<20, f[:len(f)-1]
		case 'G':
			mul, num = 1<<30, f[:len(f)-1]
		}
		v, err := strconv.Atoi(num)
		if err != nil || v <= 0 || v > cuckoo.MaxCapacity/mul {
			return nil, fmt.Errorf("bad size %q", f)
		}
		out = append(out, size{name: f, n: v * mul})
	}
	if len(out) == 0 {
		return nil, errors.New("no sizes")
	}
	return out, nil
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// parseGoroutines parses a comma-separated list of goroutine counts.
func parseGoroutines(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		v, err := strconv.Atoi(f)
		if err != nil || v <= 0 || v > 1<<16 {
			return nil, fmt.Errorf("bad goroutine count %q", f)
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no goroutine counts")
	}
	slices.Sort(out)
	return out, nil
}

func parseModes(s string) ([]cuckoo.Mode, error) {
	var out []cuckoo.Mode
	for _, f := range splitList(s) {
		var m cuckoo.Mode
		switch f {
		case "lockfree":
			m = cuckoo.LockFree
		case "locked":
			m = cuckoo.Locked
		default:
			return nil, fmt.Errorf("bad mode %q (want lockfree or locked)", f)
		}
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no modes")
	}
	return out, nil
}

// parseBits parses fingerprint sizes; 12 comes first, as the reference.
func parseBits(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		v, err := strconv.Atoi(f)
		if err != nil || v != 8 && v != 12 {
			return nil, fmt.Errorf("bad fingerprint size %q (want 8 or 12)", f)
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no fingerprint sizes")
	}
	slices.SortFunc(out, func(a, b int) int { return b - a })
	return out, nil
}

func parseKinds(s string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, f := range splitList(s) {
		if f == "all" {
			for _, k := range allKinds {
				out[k] = true
			}
			continue
		}
		if !slices.Contains(allKinds, f) {
			return nil, fmt.Errorf("bad implementation %q (want %s or all)", f, strings.Join(allKinds, ", "))
		}
		out[f] = true
	}
	if len(out) == 0 {
		return nil, errors.New("no implementations")
	}
	return out, nil
}

func parseWorkloads(s string) ([]workload, error) {
	seen := map[workload]bool{}
	for _, f := range splitList(s) {
		if !slices.Contains(allWorkloads, workload(f)) {
			return nil, fmt.Errorf("bad workload %q (want %s)", f, joinWorkloads(allWorkloads))
		}
		seen[workload(f)] = true
	}
	var out []workload
	for _, w := range allWorkloads {
		if seen[w] {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no workloads")
	}
	return out, nil
}

func joinWorkloads(ws []workload) string {
	s := make([]string, len(ws))
	for i, w := range ws {
		s[i] = string(w)
	}
	return strings.Join(s, ",")
}

// Defaults of the flags: the whole default run takes about 45 s on two
// cores.
const (
	defaultSizes      = "1M"
	defaultGoroutines = "1,2,64"
	defaultDuration   = 300 * time.Millisecond
	defaultReps       = 3
)

func runBench(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("bench", stderr)
	sizes := fs.String("sizes", defaultSizes, "comma-separated key counts (k/K, M, G = 2^10, 2^20, 2^30), e.g. 1M,32M")
	gs := fs.String("goroutines", defaultGoroutines, "comma-separated goroutine counts")
	modes := fs.String("modes", "lockfree,locked", "filter modes: lockfree, locked")
	fbits := fs.String("bits", "12,8", "fingerprint sizes: 8, 12")
	impls := fs.String("impls", strings.Join(allKinds, ","), "implementations: cuckoo (Insert/Lookup/Delete), batch (fills through InsertBatch, lookups through LookupBatch), map (map under sync.RWMutex), probe (memory probe), or all")
	wls := fs.String("workloads", joinWorkloads(allWorkloads), "workloads")
	dur := fs.Duration("duration", defaultDuration, "time per cell")
	reps := fs.Int("reps", defaultReps, "runs per lookup or mixed cell, each duration/reps long; the rate is their median")
	svg := fs.String("svg", "", "also write a chart of Mops/s against goroutines to `FILE` (SVG)")
	showProgress := fs.Bool("progress", false, "show progress on standard error (default: when it is a terminal)")
	if _, status, ok := parseFlags(fs, args, 0, 0); !ok {
		return status
	}
	cfg := benchConfig{duration: *dur, reps: *reps}
	var err error
	bad := func(err error) int {
		fmt.Fprintf(stderr, "cuckoo bench: %v\n", err)
		fs.Usage()
		return exitUsage
	}
	if cfg.sizes, err = parseSizes(*sizes); err != nil {
		return bad(fmt.Errorf("-sizes: %v", err))
	}
	if cfg.goroutines, err = parseGoroutines(*gs); err != nil {
		return bad(fmt.Errorf("-goroutines: %v", err))
	}
	if cfg.modes, err = parseModes(*modes); err != nil {
		return bad(fmt.Errorf("-modes: %v", err))
	}
	if cfg.bits, err = parseBits(*fbits); err != nil {
		return bad(fmt.Errorf("-bits: %v", err))
	}
	if cfg.kinds, err = parseKinds(*impls); err != nil {
		return bad(fmt.Errorf("-impls: %v", err))
	}
	if cfg.workloads, err = parseWorkloads(*wls); err != nil {
		return bad(fmt.Errorf("-workloads: %v", err))
	}
	if *dur <= 0 {
		return bad(fmt.Errorf("-duration must be positive, got %v", *dur))
	}
	if *reps < 1 {
		return bad(fmt.Errorf("-reps must be at least 1, got %d", *reps))
	}
	if *showProgress || isTerminal(stderr) {
		cfg.progress = stderr
	}

	header := machineHeader()
	la := loadAvg()
	rep := runBenchConfig(cfg)
	// Only the load before the run tells of other processes: by the end,
	// the 1-minute average includes this run's own busy goroutines.
	if la > float64(runtime.NumCPU())/2 {
		header = append(header, fmt.Sprintf("WARNING: other processes were running (1-minute load %.2f at start on %d CPUs): the rates are skewed", la, runtime.NumCPU()))
	}
	rep.header = header
	if err := rep.writeText(stdout); err != nil {
		return fail(stderr, "bench", err)
	}
	if *svg != "" {
		if err := writeSVGFile(*svg, rep); err != nil {
			return fail(stderr, "bench", err)
		}
	}
	return exitOK
}
