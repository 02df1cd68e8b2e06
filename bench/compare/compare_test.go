package compare

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/seed25b00da8/cuckoo"
	"github.com/seed25b00da8/cuckoo/internal/benchkit"
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
				if !f.Lookup(benchkit.Key(uint64(i))) {
					t.Fatalf("Lookup(inserted key %d) = false; want true", i)
				}
			}
			fp := 0
			for i := range n {
				if f.Lookup(benchkit.Key(benchkit.NegBit | uint64(i))) {
					fp++
				}
			}
			// The loosest filter here is seiflotfy (8-bit fingerprints,
			// about 1.6%); 5% means something is broken.
			if rate := float64(fp) / float64(n); rate > 0.05 {
				t.Errorf("false-positive rate %.4f; want below 0.05", rate)
			}
			if ts, ok := f.(benchkit.TableSizer); ok {
				if tb := ts.TableBytes(); tb <= 0 || tb > int64(n)*64 {
					t.Errorf("TableBytes() = %d; want a plausible size for %d keys", tb, n)
				}
			} else if im.Name != "map-rwmutex" {
				t.Errorf("no TableBytes; only the map's size is unknown")
			}
			if im.Static {
				if err := f.Insert(benchkit.Key(benchkit.NegBit)); !errors.Is(err, ErrUnsupported) {
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
				if !f.Delete(benchkit.Key(uint64(i))) {
					t.Fatalf("Delete(inserted key %d) = false; want true", i)
				}
			}
			for i := 1; i < n; i += 2 {
				if !f.Lookup(benchkit.Key(uint64(i))) {
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
				if !f.Lookup(benchkit.Key(uint64(i))) {
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
			key := make([]byte, KeySize)
			allocs := testing.AllocsPerRun(1000, func() {
				benchkit.PutKey(key, uint64(i%env.N))
				f.Lookup(key)
				benchkit.PutKey(key, benchkit.NegBit|uint64(i%env.N))
				f.Lookup(key)
				i++
			})
			if allocs != 0 {
				t.Errorf("allocations per lookup pair: got %v; want 0", allocs)
			}
		})
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
		if got, want := CuckooBuckets(n), f.Cap()/f.SlotsPerBucket(); got != want {
			t.Errorf("CuckooBuckets(%d) = %d; want Cap()/SlotsPerBucket() = %d", n, got, want)
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

func TestParse(t *testing.T) {
	sizes, err := benchkit.ParseSizes("1M, 32M,100K,1000", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []Size{{Name: "1M", N: 1 << 20}, {Name: "32M", N: 32 << 20}, {Name: "100K", N: 100 << 10}, {Name: "1000", N: 1000}}
	if len(sizes) != len(want) {
		t.Fatalf("ParseSizes: got %v; want %v", sizes, want)
	}
	for i := range want {
		if sizes[i] != want[i] {
			t.Errorf("ParseSizes[%d]: got %v; want %v", i, sizes[i], want[i])
		}
	}
	for _, bad := range []string{"", "M", "-1M", "x", "0"} {
		if _, err := benchkit.ParseSizes(bad, 0); err == nil {
			t.Errorf("ParseSizes(%q): got nil error; want one", bad)
		}
	}
	if _, err := benchkit.ParseWorkloads("fill,nope"); err == nil {
		t.Errorf("ParseWorkloads(unknown): got nil error; want one")
	}
	if gs, err := benchkit.ParseGoroutines("1,2,64"); err != nil || len(gs) != 3 || gs[2] != 64 {
		t.Errorf("ParseGoroutines: got %v, %v; want [1 2 64]", gs, err)
	}
	if got := Select(All(), []string{"seiflotfy"}); len(got) != 3 {
		t.Errorf("Select(seiflotfy): got %d impls; want 3", len(got))
	}
}

// TestRunTimed runs the whole pipeline on a small size and checks the
// report: every supported cell present, text and JSON output.
func TestRunTimed(t *testing.T) {
	impls := Select(All(), []string{"cuckoo-lockfree-f12", "seiflotfy", "bloom", "binfuse8", "probe"})
	cfg := Config{
		Sizes:      []Size{{Name: "4K", N: 4096}},
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
	// The batch row of the filter: fill, pos and neg at both counts.
	if got := count("cuckoo-lockfree-f12-batch"); got != 6 {
		t.Errorf("cuckoo-lockfree-f12-batch: %d cells; want 6", got)
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
