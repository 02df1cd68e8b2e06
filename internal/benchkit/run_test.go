package benchkit

import (
	"bytes"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// setFilter is a mutex-guarded set of keys, at most cap of them: the
// obviously right reference the workloads are checked against.
type setFilter struct {
	mu  sync.Mutex
	set map[string]bool
	cap int
}

func newSetFilter(cap int) *setFilter { return &setFilter{set: map[string]bool{}, cap: cap} }

func (b *setFilter) Insert(k []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.set) >= b.cap {
		return errors.New("full")
	}
	b.set[string(k)] = true
	return nil
}
func (b *setFilter) InsertBatch(keys [][]byte) (int, error) {
	for i, k := range keys {
		if err := b.Insert(k); err != nil {
			return i, err
		}
	}
	return len(keys), nil
}
func (b *setFilter) Lookup(k []byte) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.set[string(k)]
}
func (b *setFilter) LookupBatch(keys [][]byte, found []bool) int {
	for i, k := range keys {
		found[i] = b.Lookup(k)
	}
	return len(keys)
}
func (b *setFilter) Delete(k []byte) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	ok := b.set[string(k)]
	delete(b.set, string(k))
	return ok
}
func (b *setFilter) Len() int { b.mu.Lock(); defer b.mu.Unlock(); return len(b.set) }
func (b *setFilter) Cap() int { return b.cap }

func setImpl(batch bool) Impl {
	return Impl{Name: "set", Batch: batch, New: func(n int, _ *Keys) (Filter, error) { return newSetFilter(n), nil }}
}

// TestWorkloadsAgainstSet runs every workload on the reference set, plain
// and batched, with several goroutine counts, and checks the counts.
func TestWorkloadsAgainstSet(t *testing.T) {
	const n = 3000
	env := NewEnv(n)
	for _, batch := range []bool{false, true} {
		for _, g := range []int{1, 3, 64} {
			im := setImpl(batch)
			f, _ := im.New(n, nil)
			r := env.RunFor(f, im, Fill, g, 0, 0)
			if r.Ops != n || r.InsertFailed != 0 || f.(*setFilter).Len() != n {
				t.Fatalf("batch=%v g=%d: fill %d ops, %d failed, Len %d; want %d, 0, %d", batch, g, r.Ops, r.InsertFailed, f.(*setFilter).Len(), n, n)
			}
			for i := range n {
				if !f.Lookup(Key(uint64(i))) {
					t.Fatalf("key %d not inserted by the fill", i)
				}
			}
			if r := env.RunOps(f, im, LookupPos, g, n, 5000); r.Ops != 5000 || r.Hits != 5000 {
				t.Errorf("batch=%v g=%d: lookup-pos %d ops, %d hits; want 5000, 5000", batch, g, r.Ops, r.Hits)
			}
			if r := env.RunOps(f, im, LookupNeg, g, n, 5000); r.Ops != 5000 || r.Hits != 0 {
				t.Errorf("batch=%v g=%d: lookup-neg %d ops, %d hits; want 5000, 0", batch, g, r.Ops, r.Hits)
			}
			if batch {
				continue
			}
			fill := MixedFill(n)
			f, _, _ = env.Build(im, fill)
			r = env.RunOps(f, im, Mixed, g, fill, 4*n)
			if r.Ops < 4*n || r.InsertFailed != 0 || r.DeleteMissed != 0 {
				t.Errorf("g=%d: mixed %d ops, %d failed, %d missed; want >= %d, 0, 0", g, r.Ops, r.InsertFailed, r.DeleteMissed, 4*n)
			}
			if got := f.(*setFilter).Len(); got != fill {
				t.Errorf("g=%d: %d keys after mixed; want %d", g, got, fill)
			}
		}
	}
	// A structure that fills up early: every key past its capacity is
	// counted as failed, none skipped, plain and batched.
	for _, batch := range []bool{false, true} {
		small := newSetFilter(1000)
		r := env.RunOps(small, setImpl(batch), Fill, 2, 0, n)
		if r.Ops != n || r.InsertFailed != n-1000 {
			t.Errorf("batch=%v: fill into 1000 slots: %d ops, %d failed; want %d, %d", batch, r.Ops, r.InsertFailed, n, n-1000)
		}
	}
}

func TestRunForStops(t *testing.T) {
	env := NewEnv(1024)
	im := NewProbe("probe", func(n int) int { return n })
	f, _, err := env.Build(im, env.N)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r := env.RunFor(f, im, LookupPos, 64, env.N, 20*time.Millisecond)
	// A bound far above 20ms: the test checks that RunFor stops, not how
	// fast a loaded machine schedules 64 goroutines under the race detector.
	if el := time.Since(start); el > 30*time.Second {
		t.Errorf("RunFor(20ms) took %v", el)
	}
	if r.Ops == 0 {
		t.Errorf("RunFor did no operations")
	}
	// More goroutines than keys: empty slices must not spin forever.
	var stop atomic.Bool
	if r := newWorker(false).lookup(f, 0, 5, 0, math.MaxInt64, &stop); r.Ops != 0 {
		t.Errorf("lookup on no keys: %d ops; want 0", r.Ops)
	}
	r = NewEnv(8).RunFor(f, im, Mixed, 64, 8, 10*time.Millisecond)
	if r.Ops == 0 {
		t.Errorf("mixed with 64 goroutines on 8 keys did no operations")
	}
}

// slowFilter takes about a microsecond per insert.
type slowFilter struct{ n atomic.Int64 }

func (s *slowFilter) Insert([]byte) error {
	for t := time.Now(); time.Since(t) < time.Microsecond; {
	}
	s.n.Add(1)
	return nil
}
func (s *slowFilter) Lookup([]byte) bool { return true }
func (s *slowFilter) Delete([]byte) bool { return true }

func TestFillCutOff(t *testing.T) {
	env := NewEnv(1 << 20)
	f := &slowFilter{}
	r := env.RunFor(f, Impl{Name: "slow"}, Fill, 2, 0, 20*time.Millisecond)
	if r.Ops <= 0 || r.Ops >= int64(env.N) {
		t.Errorf("fill cut off after 20ms: %d ops; want between 0 and %d", r.Ops, env.N)
	}
	if got := f.n.Load(); got != r.Ops {
		t.Errorf("fill reported %d ops; the filter saw %d", r.Ops, got)
	}
	if r.Elapsed > time.Second {
		t.Errorf("fill cut off after 20ms took %v", r.Elapsed)
	}
	// A fill that finishes early returns without waiting for the limit.
	small := NewEnv(100)
	start := time.Now()
	if r := small.RunFor(&slowFilter{}, Impl{Name: "slow"}, Fill, 2, 0, time.Minute); r.Ops != 100 {
		t.Errorf("complete fill: %d ops; want 100", r.Ops)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("complete fill waited %v for its limit", el)
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{1, 2, 9}, 2}, {[]float64{1, 2, 4, 9}, 3}} {
		if got := Median(c.in); got != c.want {
			t.Errorf("Median(%v) = %v; want %v", c.in, got, c.want)
		}
	}
}

func TestKeys(t *testing.T) {
	a, neg := NewKeys(1000), map[string]bool{}
	seen := map[string]bool{}
	for i := range 1000 {
		if !bytes.Equal(a.At(i), Key(uint64(i))) {
			t.Fatalf("key %d differs between NewKeys and Key", i)
		}
		if len(a.At(i)) != KeySize || cap(a.At(i)) != KeySize {
			t.Fatalf("key %d: len %d cap %d; want %d", i, len(a.At(i)), cap(a.At(i)), KeySize)
		}
		seen[string(a.At(i))] = true
		neg[string(Key(NegBit|uint64(i)))] = true
	}
	for k := range neg {
		if seen[k] {
			t.Fatalf("negative key %x is also positive", k)
		}
	}
	if len(seen) != 1000 || len(neg) != 1000 {
		t.Errorf("%d distinct keys, %d negative; want 1000 each", len(seen), len(neg))
	}
}

func TestRatios(t *testing.T) {
	r := &Report{Cells: []Cell{
		{Impl: "a", Size: "1M", Workload: LookupPos, Goroutines: 1, Mops: 10},
		{Impl: "b", Size: "1M", Workload: LookupPos, Goroutines: 1, Mops: 5},
		{Impl: "c", Size: "1M", Workload: LookupPos, Goroutines: 1, Mops: 0},
		{Impl: "b", Size: "1M", Workload: LookupPos, Goroutines: 2, Mops: 8},
		{Impl: "a", Size: "1M", Workload: LookupNeg, Goroutines: 1, Mops: 20},
		{Impl: "b", Size: "32M", Workload: LookupPos, Goroutines: 1, Mops: 1},
	}}
	r.ComputeRatios()
	want := []map[string]float64{{"b": 2}, {"a": 0.5}, nil, nil, nil, nil}
	for i, c := range r.Cells {
		if len(c.Ratios) != len(want[i]) {
			t.Errorf("cell %d (%s %s g=%d %s): ratios %v; want %v", i, c.Impl, c.Workload, c.Goroutines, c.Size, c.Ratios, want[i])
			continue
		}
		for p, v := range want[i] {
			if got := c.Ratios[p]; math.Abs(got-v) > 1e-12 {
				t.Errorf("cell %d: ratio to %s = %v; want %v", i, p, got, v)
			}
		}
	}
}

func TestProbeIndicesInBounds(t *testing.T) {
	x := uint64(1)
	for _, m := range []int{1, 2, 3, 7, 1000, 1<<20 + 1, 8 << 20} {
		for _, special := range []uint64{0, 1, math.MaxUint64, 1 << 63} {
			if i1, i2 := probeIndices(special, m); i1 < 0 || i1 >= m || i2 < 0 || i2 >= m {
				t.Fatalf("probeIndices(%#x, %d) = %d, %d; want both in [0, %d)", special, m, i1, i2, m)
			}
		}
		seen := map[int]bool{}
		for range 10000 {
			x = xorshift(x)
			i1, i2 := probeIndices(x, m)
			if i1 < 0 || i1 >= m || i2 < 0 || i2 >= m {
				t.Fatalf("probeIndices(%#x, %d) = %d, %d; want both in [0, %d)", x, m, i1, i2, m)
			}
			seen[i1] = true
		}
		// The loads must spread over the table, not hit one word.
		if want := min(m, 1000); len(seen) < want*9/10 {
			t.Errorf("m=%d: %d distinct first indices in 10000 draws; want at least %d", m, len(seen), want*9/10)
		}
	}
	// Every table word has been written, so no page stays the zero page.
	f, err := NewProbe("probe", func(n int) int { return n / 2 }).New(1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range f.(*Probe).t {
		if w == 0 {
			t.Fatalf("probe table word %d is 0; want every word written", i)
		}
	}
	if got := f.(*Probe).Words(); got != 500 {
		t.Errorf("probe table of %d words; want 500", got)
	}
}

func TestParseSizes(t *testing.T) {
	sizes, err := ParseSizes("10k, 1M,32M,3,1000000,2K,1G", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []Size{{"10k", 10 << 10}, {"1M", 1 << 20}, {"32M", 32 << 20}, {"3", 3}, {"1000000", 1000000}, {"2K", 2048}, {"1G", 1 << 30}}
	for i := range want {
		if i >= len(sizes) || sizes[i] != want[i] {
			t.Fatalf("ParseSizes: %v; want %v", sizes, want)
		}
	}
	for _, bad := range []string{"", ",", "M", "-1M", "x", "0", "1m", "1.5M", "99999999999G"} {
		if _, err := ParseSizes(bad, 0); err == nil {
			t.Errorf("ParseSizes(%q): no error", bad)
		}
	}
	if _, err := ParseSizes("2M", 1<<20); err == nil {
		t.Errorf("ParseSizes(2M) with limit 1M: no error")
	}
	if gs, err := ParseGoroutines("64,1,2,2"); err != nil || len(gs) != 3 || gs[0] != 1 || gs[2] != 64 {
		t.Errorf("ParseGoroutines: %v, %v; want [1 2 64]", gs, err)
	}
	if w, err := ParseWorkloads("mixed,fill,mixed"); err != nil || len(w) != 2 || w[0] != Fill || w[1] != Mixed {
		t.Errorf("ParseWorkloads: %v, %v; want [fill mixed] in run order", w, err)
	}
}

// TestOnlyAndMixedFill checks the two knobs a summary uses: an impl with
// Only runs just those workloads, and Config.MixedFill sets the keys the
// mixed workload holds (the set's load after the cell is that count over n).
func TestOnlyAndMixedFill(t *testing.T) {
	const n = 2000
	only := setImpl(false)
	only.Name, only.Only = "only", []Workload{LookupPos}
	for _, tc := range []struct {
		mixed func(int) int
		held  int
	}{{nil, MixedFill(n)}, {func(n int) int { return n - 10 }, n - 10}} {
		rep, err := Run(Config{Sizes: []Size{{Name: "2k", N: n}}, Goroutines: []int{1, 2}, Duration: time.Millisecond, MixedFill: tc.mixed},
			[]Impl{setImpl(false), only})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range rep.Cells {
			if c.Impl == "only" && c.Workload != LookupPos {
				t.Errorf("impl with Only = [lookup-pos] ran %s g=%d", c.Workload, c.Goroutines)
			}
		}
		for _, g := range []int{1, 2} {
			if rep.Find("only", "2k", LookupPos, g) == nil {
				t.Errorf("impl with Only = [lookup-pos]: no lookup-pos cell at g=%d", g)
			}
			c := rep.Find("set", "2k", Mixed, g)
			if c == nil {
				t.Fatalf("no mixed cell at g=%d", g)
			}
			if want := float64(tc.held) / n; c.Load != want {
				t.Errorf("mixed g=%d: load %v after the cell; want %d/%d = %v", g, c.Load, tc.held, n, want)
			}
		}
	}
}
