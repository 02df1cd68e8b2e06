package benchkit

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Result is what one timed run did.
type Result struct {
	Ops          int64 // operations performed (skipped deletes excluded)
	Hits         int64 // lookups that returned true
	InsertFailed int64 // inserts that returned an error
	DeleteMissed int64 // deletes that found nothing
	Skipped      int64 // deletes not performed: unsupported
	Mallocs      uint64
	Elapsed      time.Duration
}

// Add accumulates s into r.
func (r *Result) Add(s Result) {
	r.Ops += s.Ops
	r.Hits += s.Hits
	r.InsertFailed += s.InsertFailed
	r.DeleteMissed += s.DeleteMissed
	r.Skipped += s.Skipped
	r.Mallocs += s.Mallocs
	r.Elapsed += s.Elapsed
}

// Mops returns millions of operations per second.
func (r Result) Mops() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Ops) / r.Elapsed.Seconds() / 1e6
}

// Env is one size: n keys, built into structures sized for n.
type Env struct {
	N    int
	keys *Keys // the first N positive keys, for static builds; made on first use
}

// NewEnv returns the environment of size n.
func NewEnv(n int) *Env { return &Env{N: n} }

func (e *Env) staticKeys(fill int) *Keys {
	if e.keys == nil {
		e.keys = NewKeys(e.N)
	}
	return &Keys{buf: e.keys.buf[:fill*KeySize]}
}

// Build returns a new instance of impl for e.N keys holding the first fill
// positive keys, inserted by one goroutine. For static structures fill must
// be e.N or less and the structure is built from those keys. The Result
// times the fill (or the build).
func (e *Env) Build(impl Impl, fill int) (Filter, Result, error) {
	if impl.Static {
		keys := e.staticKeys(fill)
		start := time.Now()
		f, err := impl.New(e.N, keys)
		return f, Result{Ops: int64(fill), Elapsed: time.Since(start)}, err
	}
	f, err := impl.New(e.N, nil)
	if err != nil {
		return nil, Result{}, err
	}
	return f, e.RunOps(f, impl, Fill, 1, 0, int64(fill)), nil
}

// block is how many operations a worker does between checks of the stop
// flag.
const block = 64

// BatchLen is the number of keys per LookupBatch and InsertBatch call.
const BatchLen = 16

// RunOps runs ops operations of workload w on f with g goroutines, f holding
// the first filled positive keys. For Fill it inserts keys
// filled..filled+ops-1; ops must not exceed e.N-filled. The mixed workload
// checks its quota every 60 operations and may run up to 59 more than ops
// per goroutine.
func (e *Env) RunOps(f Filter, impl Impl, w Workload, g, filled int, ops int64) Result {
	return e.run(f, impl, w, g, filled, ops, 0)
}

// RunFor runs workload w on f with g goroutines for about d. For Fill it
// inserts the keys not yet in (filled..e.N-1) and stops early if done; d = 0
// lets a fill run to its end.
func (e *Env) RunFor(f Filter, impl Impl, w Workload, g, filled int, d time.Duration) Result {
	return e.run(f, impl, w, g, filled, math.MaxInt64, d)
}

// worker is one goroutine's memory, allocated before the timed part so the
// loops allocate nothing.
type worker struct {
	key   []byte   // KeySize bytes
	keys  []byte   // BatchLen keys back to back
	batch [][]byte // views of keys
	found []bool
}

func newWorker(batch bool) *worker {
	w := &worker{key: padded(KeySize)}
	if batch {
		w.keys = padded(KeySize * BatchLen)
		w.batch = make([][]byte, BatchLen)
		w.found = make([]bool, BatchLen+2*linePad)[linePad : linePad+BatchLen : linePad+BatchLen]
		for i := range w.batch {
			w.batch[i] = w.keys[KeySize*i : KeySize*(i+1) : KeySize*(i+1)]
		}
	}
	return w
}

// linePad is the bytes kept free on either side of the memory a worker
// writes for every operation: two cache lines, as the spatial prefetcher
// pairs them.
const linePad = 128

// padded returns n bytes with linePad unused bytes on either side. Every
// worker writes its key buffer for every operation; without the padding
// the 16-byte buffers of several workers share a cache line (they come
// from one size class, allocated one after another), and each write takes
// the line from the other cores: a many-core run then measures the
// harness's false sharing as much as the filter.
func padded(n int) []byte {
	return make([]byte, n+2*linePad)[linePad : linePad+n : linePad+n]
}

// run runs the workload. The goroutines are started and their memory
// allocated before the clock and the allocation count start; the count
// (runtime.MemStats.Mallocs) covers the timed part only.
func (e *Env) run(f Filter, impl Impl, w Workload, g, filled int, ops int64, d time.Duration) Result {
	g = max(g, 1)
	if w == Fill {
		ops = min(ops, int64(e.N-filled))
	}
	var bf BatchFilter
	if impl.Batch {
		bf = f.(BatchFilter)
	}
	res := make([]Result, g)
	work := make([]func(stop *atomic.Bool) Result, g)
	for i := range g {
		quota := ops
		if ops != math.MaxInt64 {
			quota = ops*int64(i+1)/int64(g) - ops*int64(i)/int64(g)
		}
		ws := newWorker(impl.Batch)
		// Every goroutine inserts and deletes in its own slice of keys
		// [lo, hi). Lookups walk all the keys, each goroutine from the
		// start of its slice: with many goroutines, a goroutine cycling
		// through only its own small slice would find those keys in the
		// cache.
		lo, hi := uint64(filled*i/g), uint64(filled*(i+1)/g)
		switch w {
		case Fill:
			lo := uint64(filled) + uint64(ops*int64(i)/int64(g))
			hi := lo + uint64(quota)
			if impl.Batch {
				work[i] = func(stop *atomic.Bool) Result { return ws.fillBatch(bf, lo, hi, stop) }
			} else {
				work[i] = func(stop *atomic.Bool) Result { return ws.fill(f, lo, hi, stop) }
			}
		case LookupPos, LookupNeg:
			base, n, start := uint64(0), uint64(filled), lo
			if w == LookupNeg {
				base, n, start = NegBit, uint64(e.N), uint64(e.N*i/g)
			}
			if impl.Batch {
				work[i] = func(stop *atomic.Bool) Result { return ws.lookupBatch(bf, base, start, n, quota, stop) }
			} else {
				work[i] = func(stop *atomic.Bool) Result { return ws.lookup(f, base, start, n, quota, stop) }
			}
		case Mixed:
			work[i] = func(stop *atomic.Bool) Result {
				return ws.mixed(f, lo, hi, uint64(filled), quota, stop, !impl.NoDelete)
			}
		default:
			panic("benchkit: unknown workload " + string(w))
		}
	}
	var stop atomic.Bool
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	ready.Add(g)
	done.Add(g)
	for i := range g {
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			res[i] = work[i](&stop)
		}()
	}
	ready.Wait()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	mallocs := ms.Mallocs
	t0 := time.Now()
	close(start)
	finished := make(chan struct{})
	go func() {
		done.Wait()
		close(finished)
	}()
	if d > 0 {
		timer := time.NewTimer(d)
		select {
		case <-timer.C:
			stop.Store(true)
			<-finished
		case <-finished:
			timer.Stop()
		}
	} else {
		<-finished
	}
	elapsed := time.Since(t0)
	runtime.ReadMemStats(&ms)
	var total Result
	for _, r := range res {
		total.Add(r)
	}
	total.Elapsed = elapsed
	total.Mallocs = ms.Mallocs - mallocs
	return total
}

// fill inserts keys lo..hi-1.
func (ws *worker) fill(f Filter, lo, hi uint64, stop *atomic.Bool) (r Result) {
	key := ws.key
	for k := lo; k < hi && !stop.Load(); {
		end := min(hi, k+block)
		r.Ops += int64(end - k)
		for ; k < end; k++ {
			PutKey(key, k)
			if f.Insert(key) != nil {
				r.InsertFailed++
			}
		}
	}
	return r
}

// fillBatch is fill through InsertBatch, BatchLen keys a call. A key that
// does not fit is counted as failed and the keys after it in its batch are
// inserted by the next call.
func (ws *worker) fillBatch(f BatchFilter, lo, hi uint64, stop *atomic.Bool) (r Result) {
	for k := lo; k < hi && !stop.Load(); {
		for range block / BatchLen {
			n := 0
			for ; n < BatchLen && k < hi; n, k = n+1, k+1 {
				PutKey(ws.batch[n], k)
			}
			for b := ws.batch[:n]; len(b) > 0; {
				done, err := f.InsertBatch(b)
				b = b[done:]
				if err != nil || done == 0 {
					r.InsertFailed++
					b = b[1:]
				}
			}
			r.Ops += int64(n)
		}
	}
	return r
}

// lookup looks up keys base|0 .. base|n-1 cyclically from start, quota of
// them or until stopped.
func (ws *worker) lookup(f Filter, base, start, n uint64, quota int64, stop *atomic.Bool) (r Result) {
	if n == 0 {
		return r
	}
	key, k := ws.key, start%n
	for r.Ops < quota && !stop.Load() {
		m := min(quota-r.Ops, block)
		for range m {
			PutKey(key, base|k)
			if f.Lookup(key) {
				r.Hits++
			}
			if k++; k == n {
				k = 0
			}
		}
		r.Ops += m
	}
	return r
}

// lookupBatch is lookup through LookupBatch, BatchLen keys a call.
func (ws *worker) lookupBatch(f BatchFilter, base, start, n uint64, quota int64, stop *atomic.Bool) (r Result) {
	if n == 0 {
		return r
	}
	k := start % n
	for r.Ops < quota && !stop.Load() {
		for range block / BatchLen {
			m := int(min(quota-r.Ops, BatchLen))
			if m == 0 {
				break
			}
			for i := range m {
				PutKey(ws.batch[i], base|k)
				if k++; k == n {
					k = 0
				}
			}
			f.LookupBatch(ws.batch[:m], ws.found[:m])
			for _, ok := range ws.found[:m] {
				if ok {
					r.Hits++
				}
			}
			r.Ops += int64(m)
		}
	}
	return r
}

// mixed repeats: delete key d, 9 lookups, insert d back, 9 lookups. Keys d
// walk the worker's own slice [lo, hi) of the n inserted keys, the lookups
// all n of them from the start of that slice. The stop flag is checked
// between whole blocks of 60 operations, so no key stays deleted.
func (ws *worker) mixed(f Filter, lo, hi, n uint64, quota int64, stop *atomic.Bool, del bool) (r Result) {
	if lo >= hi {
		return r
	}
	key, d, l := ws.key, lo, lo
	lookups := func() {
		for range 9 {
			PutKey(key, l)
			if f.Lookup(key) {
				r.Hits++
			}
			if l++; l == n {
				l = 0
			}
		}
		r.Ops += 9
	}
	for r.Ops < quota && !stop.Load() {
		for range 3 {
			PutKey(key, d)
			if del {
				if !f.Delete(key) {
					r.DeleteMissed++
				}
				r.Ops++
			} else {
				r.Skipped++
			}
			lookups()
			PutKey(key, d)
			if f.Insert(key) != nil {
				r.InsertFailed++
			}
			r.Ops++
			lookups()
			if d++; d == hi {
				d = lo
			}
		}
	}
	return r
}
