package compare

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed25b00da8/cuckoo"
)

// newOrSkip builds impl for env, skipping the test if the impl cannot be
// constructed in this version of the filter (e.g. a mode not landed yet).
func newOrSkip(t *testing.T, env *Env, im Impl, fill int) Filter {
	t.Helper()
	f, r, err := env.Build(im, fill)
	if err != nil {
		if strings.HasPrefix(im.Name, "cuckoo-") {
			t.Skipf("%s: %v", im.Name, err)
		}
		t.Fatalf("Build(%s): %v", im.Name, err)
	}
	if r.InsertFailed != 0 {
		t.Fatalf("%s: %d of %d inserts failed; want 0", im.Name, r.InsertFailed, fill)
	}
	return f
}

func TestAdapters(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 5000
	}
	env := NewEnv(n)
	for _, im := range All() {
		t.Run("impl="+im.Name, func(t *testing.T) {
			f := newOrSkip(t, env, im, n)
			if im.Probe {
				return
			}
			for i := range n {
				if !f.Lookup(env.Pos.At(i)) {
					t.Fatalf("Lookup(inserted key %d) = false; want true", i)
				}
			}
			fp := 0
			for i := range n {
				if f.Lookup(env.Neg.At(i)) {
					fp++
				}
			}
			// The loosest filter here is seiflotfy (8-bit fingerprints,
			// about 1.6%); 5% means something is broken.
			if rate := float64(fp) / float64(n); rate > 0.05 {
				t.Errorf("false-positive rate %.4f; want below 0.05", rate)
			}
			if tb := f.TableBytes(); tb == 0 || tb > int64(n)*64 {
				t.Errorf("TableBytes() = %d; want -1 or a plausible size for %d keys", tb, n)
			}
			if im.Static {
				if err := f.Insert(env.Neg.At(0)); !errors.Is(err, ErrUnsupported) {
					t.Errorf("static Insert: got %v; want ErrUnsupported", err)
				}
				return
			}
			if im.NoDelete {
				return
			}
			// Delete the even keys: each must be found, and the odd ones
			// must stay.
			for i := 0; i < n; i += 2 {
				if !f.Delete(env.Pos.At(i)) {
					t.Fatalf("Delete(inserted key %d) = false; want true", i)
				}
			}
			for i := 1; i < n; i += 2 {
				if !f.Lookup(env.Pos.At(i)) {
					t.Fatalf("after deletes, Lookup(kept key %d) = false; want true", i)
				}
			}
		})
	}
}

// TestMixedKeepsKeys runs the mixed workload concurrently on every
// concurrent impl and checks that every prefilled key is still found: each
// delete is followed by the insert of the same key.
func TestMixedKeepsKeys(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 5000
	}
	env := NewEnv(n)
	fill := MixedFill(n)
	for _, im := range All() {
		if im.Static || im.Probe {
			continue
		}
		t.Run("impl="+im.Name, func(t *testing.T) {
			f := newOrSkip(t, env, im, fill)
			g := 4
			if im.Serial {
				g = 1
			}
			r := env.RunOps(f, im, Mixed, g, fill, int64(4*n))
			if r.Ops < int64(4*n)*9/10 {
				t.Errorf("Ops = %d; want about %d", r.Ops, 4*n)
			}
			if r.InsertFailed != 0 || r.DeleteMissed != 0 {
				t.Errorf("InsertFailed = %d, DeleteMissed = %d; want 0, 0", r.InsertFailed, r.DeleteMissed)
			}
			if im.NoDelete && r.Skipped == 0 {
				t.Errorf("Skipped = 0 for a filter without delete; want > 0")
			}
			for i := range fill {
				if !f.Lookup(env.Pos.At(i)) {
					t.Fatalf("after mixed, Lookup(key %d) = false; want true", i)
				}
			}
		})
	}
}

func TestLookupsDoNotAllocate(t *testing.T) {
	env := NewEnv(4096)
	for _, im := range All() {
		t.Run("impl="+im.Name, func(t *testing.T) {
			f := newOrSkip(t, env, im, env.N)
			i := 0
			allocs := testing.AllocsPerRun(1000, func() {
				f.Lookup(env.Pos.At(i % env.N))
				f.Lookup(env.Neg.At(i % env.N))
				i++
			})
			if allocs != 0 {
				t.Errorf("allocations per lookup pair: got %v; want 0", allocs)
			}
		})
	}
}

func TestProbeIndicesInBounds(t *testing.T) {
	x := uint64(1)
	for _, m := range []int{1, 2, 3, 7, 1000, 1<<20 + 1, CuckooBuckets(32 << 20)} {
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
	p := ProbeImpl()
	f, err := p.New(1000, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range f.(*probe).t {
		if w == 0 {
			t.Fatalf("probe table word %d is 0; want every word written", i)
		}
	}
	if got, want := len(f.(*probe).t), CuckooBuckets(1000); got != want {
		t.Errorf("probe table of %d words; want %d", got, want)
	}
}

// TestCuckooBuckets pins CuckooBuckets (used to size the probe) to the
// filter's own Cap.
func TestCuckooBuckets(t *testing.T) {
	for _, n := range []int{1, 3, 4, 19, 20, 1000, 1 << 20, 1<<20 + 7} {
		f, err := cuckoo.New(n)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := CuckooBuckets(n), f.Cap()/4; got != want {
			t.Errorf("CuckooBuckets(%d) = %d; want Cap()/4 = %d", n, got, want)
		}
	}
}

func TestSeiflotfySlots(t *testing.T) {
	for n, want := range map[int]int64{1: 4, 1 << 20: 1 << 21, 1000000: 1 << 21, 900000: 1 << 20} {
		if got := seiflotfySlots(n); got != want {
			t.Errorf("seiflotfySlots(%d) = %d; want %d", n, got, want)
		}
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
	want := []map[string]float64{
		{"b": 2},
		{"a": 0.5},
		nil, // no rate: no ratios
		nil, // alone in its group
		nil,
		nil,
	}
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

func TestParse(t *testing.T) {
	sizes, err := ParseSizes("1M, 32M,100K,1000")
	if err != nil {
		t.Fatal(err)
	}
	want := []Size{{"1M", 1 << 20}, {"32M", 32 << 20}, {"100K", 100 << 10}, {"1000", 1000}}
	if len(sizes) != len(want) {
		t.Fatalf("ParseSizes: got %v; want %v", sizes, want)
	}
	for i := range want {
		if sizes[i] != want[i] {
			t.Errorf("ParseSizes[%d]: got %v; want %v", i, sizes[i], want[i])
		}
	}
	for _, bad := range []string{"", "M", "-1M", "x", "0"} {
		if _, err := ParseSizes(bad); err == nil {
			t.Errorf("ParseSizes(%q): got nil error; want one", bad)
		}
	}
	if _, err := ParseWorkloads("fill,nope"); err == nil {
		t.Errorf("ParseWorkloads(unknown): got nil error; want one")
	}
	if gs, err := ParseInts("1,2,64"); err != nil || len(gs) != 3 || gs[2] != 64 {
		t.Errorf("ParseInts: got %v, %v; want [1 2 64]", gs, err)
	}
	if got := Select(All(), []string{"seiflotfy"}); len(got) != 3 {
		t.Errorf("Select(seiflotfy): got %d impls; want 3", len(got))
	}
}

func TestKeys(t *testing.T) {
	a, b, neg := NewKeys(1000, false), NewKeys(1000, false), NewKeys(1000, true)
	seen := map[string]bool{}
	for i := range 1000 {
		if !bytes.Equal(a.At(i), b.At(i)) {
			t.Fatalf("key %d differs between two generations", i)
		}
		if len(a.At(i)) != KeySize || cap(a.At(i)) != KeySize {
			t.Fatalf("key %d: len %d cap %d; want %d", i, len(a.At(i)), cap(a.At(i)), KeySize)
		}
		seen[string(a.At(i))] = true
	}
	for i := range 1000 {
		if seen[string(neg.At(i))] {
			t.Fatalf("negative key %d is also positive", i)
		}
	}
	if len(seen) != 1000 {
		t.Errorf("%d distinct keys; want 1000", len(seen))
	}
}

// TestRunTimed runs the whole pipeline on a small size and checks the
// report: every supported cell present, text and JSON output.
func TestRunTimed(t *testing.T) {
	impls := Select(All(), []string{"cuckoo-lockfree-f12", "seiflotfy", "bloom", "binfuse8", "probe"})
	cfg := Config{
		Sizes:      []Size{{"4K", 4096}},
		Goroutines: []int{1, 3},
		Duration:   5 * time.Millisecond,
	}
	rep, err := Run(cfg, impls)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range rep.Impls {
		if in.Error != "" {
			t.Errorf("%s: %s", in.Impl, in.Error)
		}
		if in.Missing != 0 {
			t.Errorf("%s: %d inserted keys missing; want 0", in.Impl, in.Missing)
		}
	}
	count := func(impl string) int {
		k := 0
		for _, c := range rep.Cells {
			if c.Impl == impl {
				k++
				if c.Ops <= 0 || c.Mops <= 0 {
					t.Errorf("%s %s g=%d: ops %d, %v Mops/s; want > 0", c.Impl, c.Workload, c.Goroutines, c.Ops, c.Mops)
				}
			}
		}
		return k
	}
	// seiflotfy (serial): fill, pos, neg, mixed at g=1 only.
	if got := count("seiflotfy"); got != 4 {
		t.Errorf("seiflotfy: %d cells; want 4", got)
	}
	// binfuse8 (static): build at g=1, pos and neg at both counts.
	if got := count("binfuse8"); got != 5 {
		t.Errorf("binfuse8: %d cells; want 5", got)
	}
	if got := count("bloom-rwmutex"); got != 8 {
		t.Errorf("bloom-rwmutex: %d cells; want 8", got)
	}
	var text, js bytes.Buffer
	if err := rep.WriteText(&text, true); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"workload=lookup-neg", "seiflotfy-rwmutex", "deletes unsupported", "ratios g=3"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text report lacks %q", s)
		}
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatalf("JSON does not decode: %v", err)
	}
	if len(back.Cells) != len(rep.Cells) {
		t.Errorf("JSON: %d cells; want %d", len(back.Cells), len(rep.Cells))
	}
}

func TestRunForStops(t *testing.T) {
	env := NewEnv(1024)
	im := ProbeImpl()
	f := newOrSkip(t, env, im, env.N)
	start := time.Now()
	r := env.RunFor(f, im, LookupPos, 64, env.N, 20*time.Millisecond)
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("RunFor(20ms) took %v", el)
	}
	if r.Ops == 0 {
		t.Errorf("RunFor did no operations")
	}
	// More goroutines than keys: empty slices must not spin forever.
	var stop atomic.Bool
	if r := lookupWorker(f, env.Pos, 5, 0, math.MaxInt64, &stop); r.Ops != 0 {
		t.Errorf("lookupWorker on an empty slice: %d ops; want 0", r.Ops)
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
func (s *slowFilter) TableBytes() int64  { return -1 }

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
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v; want %v", c.in, got, c.want)
		}
	}
}

// batchFailFilter accepts keys into a set until it holds cap of them, one
// InsertBatch call at a time, and then fails every insert.
type batchFailFilter struct {
	mu  sync.Mutex
	set map[string]bool
	cap int
}

func (b *batchFailFilter) Insert(k []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.set) >= b.cap {
		return errors.New("full")
	}
	b.set[string(k)] = true
	return nil
}
func (b *batchFailFilter) InsertBatch(keys [][]byte) (int, error) {
	for i, k := range keys {
		if err := b.Insert(k); err != nil {
			return i, err
		}
	}
	return len(keys), nil
}
func (b *batchFailFilter) Lookup(k []byte) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.set[string(k)]
}
func (b *batchFailFilter) Delete([]byte) bool { return false }
func (b *batchFailFilter) TableBytes() int64  { return -1 }

// TestFillBatch runs the fill-batch workload on the cuckoo filter (every key
// must then be found) and on a filter that fills up early (every key past
// its capacity must be counted as failed, none skipped).
func TestFillBatch(t *testing.T) {
	env := NewEnv(5000)
	im := CuckooImpls()[0]
	f, err := im.New(env.N, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ok, why := Supports(im, FillBatch, 2, f); !ok {
		t.Fatalf("cuckoo filter does not support fill-batch: %s", why)
	}
	r := env.RunOps(f, im, FillBatch, 2, 0, int64(env.N))
	if r.Ops != int64(env.N) || r.InsertFailed != 0 {
		t.Fatalf("fill-batch: %d ops, %d failed; want %d, 0", r.Ops, r.InsertFailed, env.N)
	}
	for i := 0; i < env.N; i++ {
		if !f.Lookup(env.Pos.At(i)) {
			t.Fatalf("key %d not found after fill-batch", i)
		}
	}
	small := &batchFailFilter{set: map[string]bool{}, cap: 1000}
	r = env.RunOps(small, Impl{Name: "small"}, FillBatch, 2, 0, int64(env.N))
	if r.Ops != int64(env.N) || r.InsertFailed != int64(env.N-1000) {
		t.Fatalf("fill-batch into 1000 slots: %d ops, %d failed; want %d, %d", r.Ops, r.InsertFailed, env.N, env.N-1000)
	}
	if ok, _ := Supports(Impl{Name: "plain"}, FillBatch, 1, &slowFilter{}); ok {
		t.Fatal("fill-batch supported on a filter without InsertBatch")
	}
}

// TestCuckooLookupBatchSupported checks that every cuckoo implementation runs
// the lookup-batch workload, whichever signature its LookupBatch has (it
// returns the count handled since the filter's LookupBatch learned to).
func TestCuckooLookupBatchSupported(t *testing.T) {
	for _, im := range CuckooImpls() {
		f, err := im.New(1000, nil)
		if err != nil {
			t.Fatal(err)
		}
		if ok, why := Supports(im, LookupBatch, 2, f); !ok {
			t.Fatalf("%s does not support lookup-batch: %s", im.Name, why)
		}
	}
}
