// Package compare runs the same workloads over several approximate-membership
// structures in one process and reports throughput, memory and false-positive
// rates side by side.
//
// This file is the generic runner: keys, workloads, timing, ratios, text and
// JSON output, flags. It imports only the standard library so that it can be
// copied as is into a command that compares the modes of a single filter
// without pulling in competitor libraries. The adapters live in their own
// files (cuckoo.go, seiflotfy.go, bloom.go, xorfilter.go, gomap.go, probe.go).
package compare

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"
)

// Filter is the interface every compared structure is adapted to. Keys are
// 16 bytes long (KeySize). Adapters of static structures return
// ErrUnsupported from Insert and false from Delete; adapters of structures
// without deletion return false from Delete (Impl.NoDelete tells the runner
// to skip deletes instead of calling it).
type Filter interface {
	// Insert adds key; it returns an error if the structure is full.
	Insert(key []byte) error
	// Lookup reports whether key may be in the set.
	Lookup(key []byte) bool
	// Delete removes one copy of key and reports whether it found one.
	Delete(key []byte) bool
	// TableBytes returns the size in bytes of the structure's tables as
	// computed from its parameters, or -1 if it cannot be computed (the
	// runner then reports only the measured heap growth).
	TableBytes() int64
}

// BatchFilter is implemented by filters that can look up several keys in one
// call. The lookup-batch workload runs only on them.
type BatchFilter interface {
	LookupBatch(keys [][]byte, found []bool)
}

// BatchInserter is implemented by filters that can insert several keys in
// one call. The fill-batch workload runs only on them. InsertBatch inserts
// keys in order and returns how many it inserted; it stops at the first key
// that does not fit, with a non-nil error.
type BatchInserter interface {
	InsertBatch(keys [][]byte) (int, error)
}

// ErrUnsupported is returned by adapters for operations their structure does
// not have (Insert on a static filter).
var ErrUnsupported = errors.New("compare: operation not supported")

// Impl describes one compared implementation.
type Impl struct {
	Name string // short name used in tables, flags and benchmark names
	Desc string // one line: library, parameters, synchronization

	// Static structures are built once from all keys by New and support
	// only lookups; the fill workload then times New itself.
	Static bool
	// Serial structures are not safe for concurrent use; they run with one
	// goroutine only.
	Serial bool
	// NoDelete structures cannot delete; the mixed workload skips its
	// deletes and counts them as unsupported.
	NoDelete bool
	// Probe marks a baseline that is not a filter: lookups are not checked
	// and no false-positive rate is reported.
	Probe bool

	// New returns an empty structure for n keys. Static structures are
	// built from keys instead (keys.Len() keys); others ignore keys.
	New func(n int, keys *Keys) (Filter, error)
}

// KeySize is the length of every generated key.
const KeySize = 16

// Keys is a deterministic sequence of 16-byte keys stored back to back, so
// that 32M keys cost 512 MiB and no slice headers. Key i is an 8-byte
// little-endian counter (i, with the top bit set for negative sets) followed
// by 8 bytes of an xorshift64 stream.
type Keys struct {
	buf []byte
}

// NewKeys returns n keys. Positive and negative sets never share a key: the
// counter of a negative key has its top bit set.
func NewKeys(n int, negative bool) *Keys {
	buf := make([]byte, n*KeySize)
	x, top := uint64(0x9E3779B97F4A7C15), uint64(0)
	if negative {
		x, top = 0xD1B54A32D192ED03, 1<<63
	}
	for i := 0; i < n; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		binary.LittleEndian.PutUint64(buf[i*KeySize:], uint64(i)|top)
		binary.LittleEndian.PutUint64(buf[i*KeySize+8:], x)
	}
	return &Keys{buf: buf}
}

// Len returns the number of keys.
func (k *Keys) Len() int { return len(k.buf) / KeySize }

// At returns key i. It does not allocate; the result aliases the set.
func (k *Keys) At(i int) []byte {
	o := i * KeySize
	return k.buf[o : o+KeySize : o+KeySize]
}

// Prefix returns the first n keys, sharing memory.
func (k *Keys) Prefix(n int) *Keys { return &Keys{buf: k.buf[:n*KeySize]} }

// Workload names one measured operation mix.
type Workload string

// The workloads, in the order they run.
const (
	// Fill inserts keys 0..n-1 into an empty structure sized for n keys
	// (n keys is 95% of a cuckoo filter's slots). For static structures it
	// times the build instead.
	Fill Workload = "fill"
	// FillBatch is Fill through InsertBatch, 64 keys a call (BatchInserter
	// only).
	FillBatch Workload = "fill-batch"
	// LookupPos looks up inserted keys.
	LookupPos Workload = "lookup-pos"
	// LookupNeg looks up keys that were never inserted.
	LookupNeg Workload = "lookup-neg"
	// LookupBatch looks up inserted keys 16 at a time (BatchFilter only).
	LookupBatch Workload = "lookup-batch"
	// Mixed runs 90% lookups of inserted keys, 5% deletes and 5% inserts
	// on a structure holding MixedFill(n) keys: every delete removes a key
	// the goroutine inserted and the insert 10 operations later puts it
	// back, so the load stays constant.
	Mixed Workload = "mixed"
)

// Workloads lists every workload in run order.
var Workloads = []Workload{Fill, FillBatch, LookupPos, LookupNeg, LookupBatch, Mixed}

// MixedFill returns the number of keys held during the mixed workload: 90%
// of the slots of a cuckoo filter sized for n keys at 95% load.
func MixedFill(n int) int { return int(int64(n) * 18 / 19) }

// Supports reports whether impl runs workload w with g goroutines, and if
// not, why.
func Supports(impl Impl, w Workload, g int, f Filter) (bool, string) {
	switch {
	case impl.Serial && g != 1:
		return false, "single goroutine only"
	case impl.Static && w == Fill && g != 1:
		return false, "build is single-threaded"
	case impl.Static && w == Mixed:
		return false, "static"
	case w == LookupBatch:
		if _, ok := f.(BatchFilter); !ok {
			return false, "no LookupBatch"
		}
	case w == FillBatch:
		if impl.Static {
			return false, "static"
		}
		if _, ok := f.(BatchInserter); !ok {
			return false, "no InsertBatch"
		}
	}
	return true, ""
}

// Env holds the keys of one size: Pos are inserted, Neg never are.
type Env struct {
	N   int
	Pos *Keys
	Neg *Keys
}

// NewEnv generates n positive and n negative keys.
func NewEnv(n int) *Env {
	return &Env{N: n, Pos: NewKeys(n, false), Neg: NewKeys(n, true)}
}

// Result is what one measurement did.
type Result struct {
	Ops          int64 // operations performed (skipped deletes excluded)
	Hits         int64 // lookups that returned true
	InsertFailed int64 // inserts that returned an error
	DeleteMissed int64 // deletes that found nothing
	Skipped      int64 // deletes not performed: unsupported
	Elapsed      time.Duration
}

func (r *Result) add(s Result) {
	r.Ops += s.Ops
	r.Hits += s.Hits
	r.InsertFailed += s.InsertFailed
	r.DeleteMissed += s.DeleteMissed
	r.Skipped += s.Skipped
	r.Elapsed += s.Elapsed
}

// Mops returns millions of operations per second.
func (r Result) Mops() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Ops) / r.Elapsed.Seconds() / 1e6
}

// Build returns a new instance of impl for e.N keys holding the first fill
// positive keys, inserted by one goroutine. For static structures fill must
// be e.N or less and the structure is built from those keys. The Result
// times the fill (or the build).
func (e *Env) Build(impl Impl, fill int) (Filter, Result, error) {
	if impl.Static {
		start := time.Now()
		f, err := impl.New(e.N, e.Pos.Prefix(fill))
		return f, Result{Ops: int64(fill), Elapsed: time.Since(start)}, err
	}
	f, err := impl.New(e.N, nil)
	if err != nil {
		return nil, Result{}, err
	}
	r := e.RunOps(f, impl, Fill, 1, 0, int64(fill))
	return f, r, nil
}

// block is how many operations a worker does between checks of the stop
// flag.
const block = 64

// RunOps runs ops operations of workload w on f with g goroutines, f holding
// the first filled positive keys. For Fill it inserts keys
// filled..filled+ops-1; ops must not exceed e.N-filled. The mixed workload
// works in blocks of 20 operations and may run up to 19 more than ops per
// goroutine.
func (e *Env) RunOps(f Filter, impl Impl, w Workload, g, filled int, ops int64) Result {
	return e.run(f, impl, w, g, filled, ops, 0)
}

// RunFor runs workload w on f with g goroutines for about d. For Fill it
// inserts the keys not yet in (filled..e.N-1) and stops early if done.
func (e *Env) RunFor(f Filter, impl Impl, w Workload, g, filled int, d time.Duration) Result {
	return e.run(f, impl, w, g, filled, math.MaxInt64, d)
}

func (e *Env) run(f Filter, impl Impl, w Workload, g, filled int, ops int64, d time.Duration) Result {
	if g < 1 {
		g = 1
	}
	if w == Fill || w == FillBatch {
		ops = min(ops, int64(e.N-filled))
	}
	res := make([]Result, g)
	work := make([]func(stop *atomic.Bool) Result, g)
	for i := range g {
		quota := ops
		if ops != math.MaxInt64 {
			quota = ops*int64(i+1)/int64(g) - ops*int64(i)/int64(g)
		}
		// Every goroutine inserts and deletes in its own slice of keys
		// [lo, hi). Lookups walk all the keys, each goroutine from the
		// start of its slice: with many goroutines, a goroutine cycling
		// through only its own small slice during its time slice would
		// find those keys in the cache.
		lo, hi := filled*i/g, filled*(i+1)/g
		switch w {
		case Fill, FillBatch:
			lo := filled + int(ops*int64(i)/int64(g))
			hi := lo + int(quota)
			if bi, ok := f.(BatchInserter); ok && w == FillBatch {
				batch := make([][]byte, block)
				work[i] = func(stop *atomic.Bool) Result { return fillBatchWorker(bi, e.Pos, lo, hi, stop, batch) }
			} else {
				work[i] = func(stop *atomic.Bool) Result { return fillWorker(f, e.Pos, lo, hi, stop) }
			}
		case LookupPos:
			work[i] = func(stop *atomic.Bool) Result { return lookupWorker(f, e.Pos, lo, filled, quota, stop) }
		case LookupNeg:
			start := e.N * i / g
			work[i] = func(stop *atomic.Bool) Result { return lookupWorker(f, e.Neg, start, e.N, quota, stop) }
		case LookupBatch:
			bf, _ := f.(BatchFilter)
			batch, found := make([][]byte, 16), make([]bool, 16)
			work[i] = func(stop *atomic.Bool) Result {
				return batchWorker(bf, e.Pos, lo, filled, quota, stop, batch, found)
			}
		case Mixed:
			work[i] = func(stop *atomic.Bool) Result {
				return mixedWorker(f, e.Pos, lo, hi, filled, quota, stop, !impl.NoDelete)
			}
		default:
			panic("compare: unknown workload " + string(w))
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
	var total Result
	for _, r := range res {
		total.add(r)
	}
	total.Elapsed = time.Since(t0)
	return total
}

// runReps runs workload w reps times for d/reps each.
func (e *Env) runReps(f Filter, impl Impl, w Workload, g, filled int, d time.Duration, reps int) []Result {
	reps = max(reps, 1)
	out := make([]Result, reps)
	for i := range out {
		out[i] = e.RunFor(f, impl, w, g, filled, d/time.Duration(reps))
	}
	return out
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

func fillWorker(f Filter, keys *Keys, lo, hi int, stop *atomic.Bool) (r Result) {
	for i := lo; i < hi && !stop.Load(); {
		end := min(hi, i+block)
		for j := i; j < end; j++ {
			if f.Insert(keys.At(j)) != nil {
				r.InsertFailed++
			}
		}
		r.Ops += int64(end - i)
		i = end
	}
	return r
}

// fillBatchWorker is fillWorker through InsertBatch, block keys a call. A
// key that does not fit is counted as failed and the rest of its block is
// inserted after it.
func fillBatchWorker(f BatchInserter, keys *Keys, lo, hi int, stop *atomic.Bool, batch [][]byte) (r Result) {
	for i := lo; i < hi && !stop.Load(); {
		end := min(hi, i+block)
		b := batch[:end-i]
		for j := range b {
			b[j] = keys.At(i + j)
		}
		for len(b) > 0 {
			n, err := f.InsertBatch(b)
			b = b[n:]
			if err != nil || n == 0 {
				r.InsertFailed++
				b = b[1:]
			}
		}
		r.Ops += int64(end - i)
		i = end
	}
	return r
}

// lookupWorker looks up keys 0..n-1 cyclically, from key start.
func lookupWorker(f Filter, keys *Keys, start, n int, quota int64, stop *atomic.Bool) (r Result) {
	if n <= 0 {
		return r
	}
	i := start % n
	for r.Ops < quota && !stop.Load() {
		m := min(quota-r.Ops, block)
		for range m {
			if f.Lookup(keys.At(i)) {
				r.Hits++
			}
			if i++; i == n {
				i = 0
			}
		}
		r.Ops += m
	}
	return r
}

// batchWorker looks up keys 0..n-1 cyclically, from key start, in batches.
func batchWorker(f BatchFilter, keys *Keys, start, n int, quota int64, stop *atomic.Bool, batch [][]byte, found []bool) (r Result) {
	if n <= 0 {
		return r
	}
	i := start % n
	for r.Ops < quota && !stop.Load() {
		m := int(min(quota-r.Ops, int64(len(batch))))
		for j := range m {
			batch[j] = keys.At(i)
			if i++; i == n {
				i = 0
			}
		}
		f.LookupBatch(batch[:m], found[:m])
		for _, ok := range found[:m] {
			if ok {
				r.Hits++
			}
		}
		r.Ops += int64(m)
	}
	return r
}

// mixedWorker repeats: delete key d, 9 lookups, insert d back, 9 lookups.
// Keys d walk the worker's own slice [lo, hi) of the n inserted keys, the
// lookups all n of them from the middle of that slice. The stop flag is
// checked between whole blocks so no key stays deleted.
func mixedWorker(f Filter, keys *Keys, lo, hi, n int, quota int64, stop *atomic.Bool, del bool) (r Result) {
	if lo >= hi {
		return r
	}
	d, l := lo, lo+(hi-lo)/2
	lookups := func() {
		for range 9 {
			if f.Lookup(keys.At(l)) {
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
			k := keys.At(d)
			if d++; d == hi {
				d = lo
			}
			if del {
				if !f.Delete(k) {
					r.DeleteMissed++
				}
				r.Ops++
			} else {
				r.Skipped++
			}
			lookups()
			if f.Insert(k) != nil {
				r.InsertFailed++
			}
			r.Ops++
			lookups()
		}
	}
	return r
}

// Config selects what Run measures.
type Config struct {
	Sizes      []Size
	Goroutines []int
	Impls      []string // substrings of names to run; empty: all
	Workloads  []Workload
	Duration   time.Duration // per cell
	Reps       int           // timed cells: repetitions of Duration/Reps, rate = median
	FillLimit  time.Duration // cuts off one fill; 0: none
	Ref        string        // ratio reference in the text table; empty: first impl
	Matrix     bool          // print the ratio of every impl to every peer
	JSON       string        // file to write the report to; empty: none
	Header     []string      // extra lines for the report header (e.g. "rtm: false")
	Log        io.Writer     // progress; nil: none
}

// Size is a key count with the name it was given on the command line.
type Size struct {
	Name string
	N    int
}

// ParseSizes parses a comma-separated list such as "1M,32M" (K = 2^10,
// M = 2^20, G = 2^30).
func ParseSizes(s string) ([]Size, error) {
	var out []Size
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		mul, num := 1, f
		switch strings.ToUpper(f[len(f)-1:]) {
		case "K":
			mul, num = 1<<10, f[:len(f)-1]
		case "M":
			mul, num = 1<<20, f[:len(f)-1]
		case "G":
			mul, num = 1<<30, f[:len(f)-1]
		}
		v, err := strconv.Atoi(num)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("compare: bad size %q", f)
		}
		out = append(out, Size{Name: f, N: v * mul})
	}
	if len(out) == 0 {
		return nil, errors.New("compare: no sizes")
	}
	return out, nil
}

// ParseInts parses a comma-separated list of positive integers.
func ParseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("compare: bad count %q", f)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, errors.New("compare: empty list")
	}
	return out, nil
}

// ParseWorkloads parses a comma-separated list of workload names.
func ParseWorkloads(s string) ([]Workload, error) {
	var out []Workload
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		ok := false
		for _, w := range Workloads {
			if string(w) == f {
				out, ok = append(out, w), true
			}
		}
		if !ok {
			return nil, fmt.Errorf("compare: unknown workload %q", f)
		}
	}
	return out, nil
}

// Select returns the impls whose name contains one of the comma-separated
// substrings in filter (all of them if filter is empty).
func Select(impls []Impl, filter []string) []Impl {
	if len(filter) == 0 {
		return impls
	}
	var out []Impl
	for _, im := range impls {
		for _, s := range filter {
			if s != "" && strings.Contains(im.Name, s) {
				out = append(out, im)
				break
			}
		}
	}
	return out
}

// Machine describes where the report was measured.
type Machine struct {
	GoVersion  string `json:"go_version"`
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	CPU        string `json:"cpu"`
	NumCPU     int    `json:"num_cpu"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	// Load averages (/proc/loadavg) when the run started and ended: other
	// processes on the machine skew the numbers.
	LoadStart string `json:"load_start,omitempty"`
	LoadEnd   string `json:"load_end,omitempty"`
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// ImplInfo is what Run learned about one impl at one size.
type ImplInfo struct {
	Impl            string   `json:"impl"`
	Desc            string   `json:"desc"`
	Size            string   `json:"size"`
	N               int      `json:"n"`
	Kind            string   `json:"kind"`
	TableBytes      int64    `json:"table_bytes"`
	HeapBytes       int64    `json:"heap_bytes"`
	TableBitsPerKey float64  `json:"table_bits_per_key"`
	HeapBitsPerKey  float64  `json:"heap_bits_per_key"`
	FPR             float64  `json:"fpr"`
	FPRProbes       int64    `json:"fpr_probes"`
	Verified        int64    `json:"verified"` // inserted keys looked up after the fill
	Missing         int64    `json:"missing"`  // of those, not found
	FillFailed      int64    `json:"fill_failed"`
	Error           string   `json:"error,omitempty"`
	Notes           []string `json:"notes,omitempty"`
}

// Cell is one measurement: impl x workload x size x goroutines.
type Cell struct {
	Impl         string             `json:"impl"`
	Workload     Workload           `json:"workload"`
	Size         string             `json:"size"`
	N            int                `json:"n"`
	Goroutines   int                `json:"goroutines"`
	Ops          int64              `json:"ops"`
	Seconds      float64            `json:"seconds"`
	Mops         float64            `json:"mops"` // median over the repetitions
	Reps         int                `json:"reps"`
	MopsMin      float64            `json:"mops_min"`
	MopsMax      float64            `json:"mops_max"`
	Hits         int64              `json:"hits"`
	InsertFailed int64              `json:"insert_failed"`
	DeleteMissed int64              `json:"delete_missed"`
	Skipped      int64              `json:"skipped"`
	Note         string             `json:"note,omitempty"`
	Ratios       map[string]float64 `json:"ratios,omitempty"` // this cell's Mops / the peer's, same size, workload, goroutines
}

// Report is the outcome of Run.
type Report struct {
	Machine    Machine    `json:"machine"`
	Command    string     `json:"command"`
	Header     []string   `json:"header,omitempty"`
	Duration   string     `json:"duration_per_cell"`
	Reps       int        `json:"reps"`
	Sizes      []Size     `json:"sizes"`
	Goroutines []int      `json:"goroutines"`
	Workloads  []Workload `json:"workloads"`
	Ref        string     `json:"ref"`
	Impls      []ImplInfo `json:"impls"`
	Cells      []Cell     `json:"cells"`
}

// probeCap bounds the untimed verification and false-positive passes.
const probeCap = 1 << 23

// Run measures every selected impl, one impl at a time: each is built,
// measured and released (with a GC) before the next, so that only one large
// structure is alive at once.
func Run(cfg Config, all []Impl) (*Report, error) {
	impls := Select(all, cfg.Impls)
	if len(impls) == 0 {
		return nil, errors.New("compare: no impl selected")
	}
	if cfg.Duration <= 0 {
		cfg.Duration = 500 * time.Millisecond
	}
	if cfg.Reps <= 0 {
		cfg.Reps = 5
	}
	if len(cfg.Workloads) == 0 {
		cfg.Workloads = Workloads
	}
	if len(cfg.Goroutines) == 0 {
		cfg.Goroutines = []int{1}
	}
	logf := func(format string, a ...any) {
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, format+"\n", a...)
		}
	}
	rep := &Report{
		Machine:    machine(),
		Command:    strings.Join(append([]string{filepath.Base(os.Args[0])}, os.Args[1:]...), " "),
		Header:     cfg.Header,
		Duration:   cfg.Duration.String(),
		Reps:       cfg.Reps,
		Sizes:      cfg.Sizes,
		Goroutines: cfg.Goroutines,
		Workloads:  cfg.Workloads,
		Ref:        impls[0].Name,
	}
	for _, im := range impls {
		if im.Name == cfg.Ref {
			rep.Ref = cfg.Ref
		}
	}
	want := map[Workload]bool{}
	for _, w := range cfg.Workloads {
		want[w] = true
	}
	for _, size := range cfg.Sizes {
		logf("generating %d+%d keys for n=%s", size.N, size.N, size.Name)
		env := NewEnv(size.N)
		for _, im := range impls {
			info, cells := runImpl(cfg, env, size, im, want, logf)
			rep.Impls = append(rep.Impls, info)
			rep.Cells = append(rep.Cells, cells...)
			runtime.GC()
		}
		env = nil
		runtime.GC()
	}
	rep.Machine.LoadEnd = loadAvg()
	rep.ComputeRatios()
	return rep, nil
}

func kind(im Impl) string {
	switch {
	case im.Probe:
		return "probe"
	case im.Static:
		return "static"
	case im.Serial:
		return "serial"
	case im.NoDelete:
		return "no-delete"
	}
	return "concurrent"
}

func heapAlloc() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

func runImpl(cfg Config, env *Env, size Size, im Impl, want map[Workload]bool, logf func(string, ...any)) (ImplInfo, []Cell) {
	info := ImplInfo{Impl: im.Name, Desc: im.Desc, Size: size.Name, N: size.N, Kind: kind(im), TableBytes: -1, HeapBytes: -1}
	var cells []Cell
	// cell records the repetitions of one measurement; its rate is their
	// median, which shrugs off a repetition stalled by another process.
	cell := func(w Workload, g int, reps []Result, note string) {
		var r Result
		rates := make([]float64, len(reps))
		for i, x := range reps {
			r.add(x)
			rates[i] = x.Mops()
		}
		sort.Float64s(rates)
		c := Cell{
			Impl: im.Name, Workload: w, Size: size.Name, N: size.N, Goroutines: g,
			Ops: r.Ops, Seconds: r.Elapsed.Seconds(), Hits: r.Hits,
			Reps: len(reps), Mops: median(rates), MopsMin: rates[0], MopsMax: rates[len(rates)-1],
			InsertFailed: r.InsertFailed, DeleteMissed: r.DeleteMissed, Skipped: r.Skipped, Note: note,
		}
		if r.InsertFailed > 0 {
			c.Note = strings.TrimSpace(c.Note + fmt.Sprintf(" %d inserts failed", r.InsertFailed))
		}
		if r.DeleteMissed > 0 {
			c.Note = strings.TrimSpace(c.Note + fmt.Sprintf(" %d deletes missed", r.DeleteMissed))
		}
		if r.Skipped > 0 {
			c.Note = strings.TrimSpace(c.Note + fmt.Sprintf(" deletes unsupported: %d skipped (%.1f%% of attempted ops)",
				r.Skipped, 100*float64(r.Skipped)/float64(r.Ops+r.Skipped)))
		}
		logf("  %-22s %-12s n=%-5s g=%-3d %8.2f Mops/s (%d reps, %.2f..%.2f) %s", im.Name, w, size.Name, g, c.Mops, c.Reps, c.MopsMin, c.MopsMax, c.Note)
		cells = append(cells, c)
	}
	fail := func(err error) (ImplInfo, []Cell) {
		info.Error = err.Error()
		logf("  %-22s skipped: %v", im.Name, err)
		return info, cells
	}

	// Fill: a fresh structure per repetition until Duration is spent, each
	// repetition cut off after FillLimit. The first complete fill gives the
	// heap growth; the last one stays for the lookups.
	var f Filter
	complete := false
	gs := cfg.Goroutines
	for _, g := range gs {
		if ok, _ := Supports(im, Fill, g, nil); !ok || !want[Fill] {
			continue
		}
		var total Result
		var reps []Result
		var cut int64
		for rep := 0; rep == 0 || total.Elapsed < cfg.Duration; rep++ {
			f = nil
			// The heap is measured around the first complete fill only;
			// later repetitions collect only when the tables are large.
			var h0 int64
			if info.HeapBytes < 0 {
				h0 = heapAlloc()
			} else if env.N >= 1<<22 {
				runtime.GC()
			}
			var r Result
			var err error
			if im.Static {
				f, r, err = env.Build(im, env.N)
			} else if f, err = im.New(env.N, nil); err == nil {
				r = env.run(f, im, Fill, g, 0, int64(env.N), cfg.FillLimit)
			}
			if err != nil {
				return fail(err)
			}
			total.add(r)
			reps = append(reps, r)
			if complete = r.Ops == int64(env.N); !complete {
				cut = r.Ops
				break
			}
			if info.HeapBytes < 0 {
				info.HeapBytes = heapAlloc() - h0
			}
		}
		note := ""
		if im.Static {
			note = "build from all keys (ops = keys)"
		}
		if !complete {
			note = fmt.Sprintf("cut off after %v at %.0f%% of n", cfg.FillLimit, 100*float64(cut)/float64(env.N))
		}
		cell(Fill, g, reps, note)
		info.FillFailed = total.InsertFailed
	}
	// Fill through InsertBatch: fresh structures as above, none kept.
	if want[FillBatch] && !im.Static {
		// A small instance answers whether the impl has InsertBatch.
		if probe, err := im.New(1024, nil); err == nil {
			for _, g := range gs {
				if ok, _ := Supports(im, FillBatch, g, probe); !ok {
					continue
				}
				var total Result
				var reps []Result
				note := ""
				for rep := 0; rep == 0 || total.Elapsed < cfg.Duration; rep++ {
					fb, err := im.New(env.N, nil)
					if err != nil {
						return fail(err)
					}
					if env.N >= 1<<22 {
						runtime.GC()
					}
					r := env.run(fb, im, FillBatch, g, 0, int64(env.N), cfg.FillLimit)
					total.add(r)
					reps = append(reps, r)
					if r.Ops != int64(env.N) {
						note = fmt.Sprintf("cut off after %v at %.0f%% of n", cfg.FillLimit, 100*float64(r.Ops)/float64(env.N))
						break
					}
				}
				cell(FillBatch, g, reps, note)
			}
		}
	}

	if !complete { // no fill ran, or the last one was cut off
		f = nil
		h0 := heapAlloc()
		r := Result{}
		var err error
		if f, r, err = env.Build(im, env.N); err != nil {
			return fail(err)
		}
		if info.HeapBytes < 0 {
			info.HeapBytes = heapAlloc() - h0
		}
		info.FillFailed = r.InsertFailed
	}
	info.TableBytes = f.TableBytes()
	if info.TableBytes >= 0 {
		info.TableBitsPerKey = 8 * float64(info.TableBytes) / float64(env.N)
	}
	if info.HeapBytes >= 0 {
		info.HeapBitsPerKey = 8 * float64(info.HeapBytes) / float64(env.N)
	}

	// Untimed checks: every inserted key is found; the false-positive rate.
	probes := min(env.N, probeCap)
	pos := env.RunOps(f, im, LookupPos, 1, probes, int64(probes))
	neg := env.RunOps(f, im, LookupNeg, 1, env.N, int64(probes))
	if !im.Probe {
		info.Verified, info.Missing = pos.Ops, pos.Ops-pos.Hits
		info.FPR, info.FPRProbes = float64(neg.Hits)/float64(neg.Ops), neg.Ops
		if info.Missing > 0 && info.FillFailed == 0 {
			info.Notes = append(info.Notes, fmt.Sprintf("FALSE NEGATIVES: %d of %d inserted keys not found", info.Missing, info.Verified))
		}
	}

	for _, w := range []Workload{LookupPos, LookupNeg, LookupBatch} {
		if !want[w] {
			continue
		}
		for _, g := range gs {
			if ok, _ := Supports(im, w, g, f); !ok {
				continue
			}
			runtime.GC()
			cell(w, g, env.runReps(f, im, w, g, env.N, cfg.Duration, cfg.Reps), "")
		}
	}

	if want[Mixed] && !im.Static {
		f = nil
		runtime.GC()
		fill := MixedFill(env.N)
		var err error
		if f, _, err = env.Build(im, fill); err != nil {
			return fail(err)
		}
		for _, g := range gs {
			if ok, _ := Supports(im, Mixed, g, f); !ok {
				continue
			}
			runtime.GC()
			cell(Mixed, g, env.runReps(f, im, Mixed, g, fill, cfg.Duration, cfg.Reps), "")
		}
	}
	runtime.KeepAlive(f)
	return info, cells
}

// ComputeRatios sets every cell's Ratios: its Mops divided by the Mops of
// each other impl measured with the same size, workload and goroutines.
func (r *Report) ComputeRatios() {
	type key struct {
		size string
		w    Workload
		g    int
	}
	groups := map[key][]int{}
	for i, c := range r.Cells {
		k := key{c.Size, c.Workload, c.Goroutines}
		groups[k] = append(groups[k], i)
	}
	for _, idx := range groups {
		for _, i := range idx {
			c := &r.Cells[i]
			c.Ratios = nil
			for _, j := range idx {
				p := r.Cells[j]
				if j == i || c.Mops <= 0 || p.Mops <= 0 {
					continue
				}
				if c.Ratios == nil {
					c.Ratios = map[string]float64{}
				}
				c.Ratios[p.Impl] = c.Mops / p.Mops
			}
		}
	}
}

// find returns the cell of impl, or nil.
func (r *Report) find(impl, size string, w Workload, g int) *Cell {
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Impl == impl && c.Size == size && c.Workload == w && c.Goroutines == g {
			return c
		}
	}
	return nil
}

// WriteText prints the report as plain-text tables.
func (r *Report) WriteText(w io.Writer, matrix bool) error {
	bw := bufio.NewWriter(w)
	m := r.Machine
	fmt.Fprintf(bw, "# filter comparison\n")
	fmt.Fprintf(bw, "%s %s/%s, %s, NumCPU=%d GOMAXPROCS=%d\n", m.GoVersion, m.GOOS, m.GOARCH, m.CPU, m.NumCPU, m.GOMAXPROCS)
	if m.LoadStart != "" {
		fmt.Fprintf(bw, "load average at start: %s, at end: %s\n", m.LoadStart, m.LoadEnd)
		for _, l := range []string{m.LoadStart, m.LoadEnd} {
			if f := strings.Fields(l); len(f) > 0 {
				if v, err := strconv.ParseFloat(f[0], 64); err == nil && v > float64(m.NumCPU)/2 {
					fmt.Fprintf(bw, "WARNING: other processes were running (1-minute load %s on %d CPUs); the rates are skewed\n", f[0], m.NumCPU)
					break
				}
			}
		}
	}
	fmt.Fprintf(bw, "command: %s\n", r.Command)
	for _, h := range r.Header {
		fmt.Fprintln(bw, h)
	}
	fmt.Fprintf(bw, "%s per cell; rate = median of its repetitions (fills: whole fills; others: %d slices);\n", r.Duration, r.Reps)
	fmt.Fprintf(bw, "16-byte keys (8-byte counter + 8-byte xorshift); each goroutine inserts and deletes in its own slice of them,\n")
	fmt.Fprintf(bw, "lookups walk all keys from the start of the goroutine's slice;\n")
	fmt.Fprintf(bw, "fill = inserts into an empty structure sized for n keys, n keys = 95%% of a cuckoo filter's slots;\n")
	fmt.Fprintf(bw, "mixed = 90%% lookups of inserted keys, 5%% delete + 5%% re-insert of the same keys, at 90%% cuckoo load (%s keys per n);\n", "18/19")
	fmt.Fprintf(bw, "bits/key = table size from parameters, heap = HeapAlloc growth after the fill, both over n;\n")
	fmt.Fprintf(bw, "FPR = positives over min(n, %d) never-inserted keys; ratios are Mops/s over the reference's Mops/s.\n", probeCap)

	names := []string{}
	seen := map[string]bool{}
	for _, in := range r.Impls {
		if !seen[in.Impl] {
			seen[in.Impl] = true
			names = append(names, in.Impl)
		}
	}
	// Names are padded by hand: the tables align right, except the names.
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, size := range r.Sizes {
		fmt.Fprintf(bw, "\n## n=%s (%d keys)\n\n", size.Name, size.N)
		tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "%-*s\tkind\tbits/key\theap bits/key\tFPR\t  notes\n", width, "impl")
		for _, in := range r.Impls {
			if in.Size != size.Name {
				continue
			}
			notes := strings.Join(in.Notes, "; ")
			if in.Error != "" {
				notes = "not run: " + in.Error
			}
			if in.FillFailed > 0 {
				notes = strings.TrimSpace(notes + fmt.Sprintf(" fill: %d inserts failed", in.FillFailed))
			}
			fpr := "-"
			if in.FPRProbes > 0 {
				fpr = fmt.Sprintf("%.4f%%", 100*in.FPR)
			}
			fmt.Fprintf(tw, "%-*s\t%s\t%s\t%s\t%s\t  %s\n", width, in.Impl, in.Kind, bitsStr(in.TableBitsPerKey, in.TableBytes),
				bitsStr(in.HeapBitsPerKey, in.HeapBytes), fpr, notes)
		}
		tw.Flush()

		for _, wl := range r.Workloads {
			present := false
			for _, c := range r.Cells {
				present = present || (c.Size == size.Name && c.Workload == wl)
			}
			if !present {
				continue
			}
			fmt.Fprintf(bw, "\n### workload=%s n=%s: Mops/s, then ratio to %s\n\n", wl, size.Name, r.Ref)
			tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintf(tw, "%-*s\t", width, "impl")
			for _, g := range r.Goroutines {
				fmt.Fprintf(tw, "g=%d\t", g)
			}
			for _, g := range r.Goroutines {
				fmt.Fprintf(tw, "x ref g=%d\t", g)
			}
			fmt.Fprintln(tw)
			var notes []string
			unstable := false
			for _, name := range names {
				row, has := fmt.Sprintf("%-*s\t", width, name), false
				var ratios string
				for _, g := range r.Goroutines {
					c := r.find(name, size.Name, wl, g)
					if c == nil {
						row += "-\t"
						ratios += "-\t"
						continue
					}
					has = true
					star := ""
					if c.MopsMin > 0 && c.MopsMax > 1.5*c.MopsMin {
						star, unstable = "*", true
					}
					row += fmt.Sprintf("%.2f%s\t", c.Mops, star)
					switch {
					case name == r.Ref:
						ratios += "1\t"
					case c.Ratios[r.Ref] > 0:
						ratios += fmt.Sprintf("%.2f\t", c.Ratios[r.Ref])
					default:
						ratios += "-\t"
					}
					if c.Note != "" {
						notes = append(notes, fmt.Sprintf("%s g=%d: %s", name, g, c.Note))
					}
				}
				if has {
					fmt.Fprintln(tw, row+ratios)
				}
			}
			tw.Flush()
			if unstable {
				fmt.Fprintf(bw, "  * repetitions spread over more than 1.5x (see mops_min, mops_max in the JSON)\n")
			}
			for _, n := range notes {
				fmt.Fprintf(bw, "  note: %s\n", n)
			}
			if matrix {
				r.writeMatrix(bw, size, wl, names)
			}
		}
	}
	return bw.Flush()
}

func bitsStr(v float64, bytes int64) string {
	if bytes < 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", v)
}

// writeMatrix prints, for each goroutine count, the ratio of every impl (row)
// to every peer (column, numbered).
func (r *Report) writeMatrix(w io.Writer, size Size, wl Workload, names []string) {
	for _, g := range r.Goroutines {
		var rows []string
		for _, n := range names {
			if r.find(n, size.Name, wl, g) != nil {
				rows = append(rows, n)
			}
		}
		if len(rows) < 2 {
			continue
		}
		fmt.Fprintf(w, "\n  ratios g=%d (row Mops/s / column Mops/s)\n", g)
		tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "  \t")
		for j := range rows {
			fmt.Fprintf(tw, "#%d\t", j+1)
		}
		fmt.Fprintln(tw)
		for i, n := range rows {
			c := r.find(n, size.Name, wl, g)
			fmt.Fprintf(tw, "  #%d %s\t", i+1, n)
			for _, p := range rows {
				if v, ok := c.Ratios[p]; ok {
					fmt.Fprintf(tw, "%.2f\t", v)
				} else {
					fmt.Fprint(tw, "-\t")
				}
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(r)
}

func machine() Machine {
	m := Machine{
		GoVersion:  runtime.Version(),
		GOOS:       runtime.GOOS,
		GOARCH:     runtime.GOARCH,
		CPU:        "unknown CPU",
		NumCPU:     runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		LoadStart:  loadAvg(),
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

// Main parses args as command-line flags, runs the comparison over impls and
// prints the text report to stdout (progress to stderr).
func Main(args []string, impls []Impl, header ...string) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	sizes := fs.String("sizes", "1M", "comma-separated key counts (K, M, G = powers of 2), e.g. 1M,32M")
	gs := fs.String("goroutines", "1,2,64", "comma-separated goroutine counts (serial impls run only with 1)")
	names := make([]string, len(impls))
	for i, im := range impls {
		names[i] = im.Name
	}
	sel := fs.String("impls", "", "comma-separated substrings of impl names to run (default all): "+strings.Join(names, ", "))
	wls := make([]string, len(Workloads))
	for i, w := range Workloads {
		wls[i] = string(w)
	}
	wl := fs.String("workloads", strings.Join(wls, ","), "comma-separated workloads")
	dur := fs.Duration("duration", 500*time.Millisecond, "time per cell (a fill runs at least once)")
	reps := fs.Int("reps", 5, "repetitions per timed cell (each duration/reps long); the rate is their median")
	fillLimit := fs.Duration("fill-limit", 30*time.Second, "cut off a fill that takes longer (0: never)")
	ref := fs.String("ref", "", "reference impl for the ratio columns (default the first selected)")
	matrix := fs.Bool("matrix", false, "also print the ratio of every impl to every peer")
	jsonOut := fs.String("json", "", "also write the report as JSON to this file")
	quiet := fs.Bool("q", false, "no progress on stderr")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg := Config{Duration: *dur, Reps: *reps, FillLimit: *fillLimit, Ref: *ref, Matrix: *matrix, JSON: *jsonOut, Header: header}
	var err error
	if cfg.Sizes, err = ParseSizes(*sizes); err != nil {
		return err
	}
	if cfg.Goroutines, err = ParseInts(*gs); err != nil {
		return err
	}
	if cfg.Workloads, err = ParseWorkloads(*wl); err != nil {
		return err
	}
	if *sel != "" {
		cfg.Impls = strings.Split(*sel, ",")
	}
	if !*quiet {
		cfg.Log = os.Stderr
	}
	rep, err := Run(cfg, impls)
	if err != nil {
		return err
	}
	if err := rep.WriteText(os.Stdout, cfg.Matrix); err != nil {
		return err
	}
	if cfg.JSON != "" {
		out, err := os.Create(cfg.JSON)
		if err != nil {
			return err
		}
		if err := rep.WriteJSON(out); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	}
	return nil
}
