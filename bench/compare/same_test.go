package compare

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSameCellsAsCuckooBench runs `cuckoo bench` (the main module's
// command) and this package on the same small cells with fixed operation
// counts (-ops) and checks that they report the same numbers: the same
// cells, the same operation, hit and failure counts, the same load and
// false-positive rates, the same table sizes. Only the times may differ.
func TestSameCellsAsCuckooBench(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build cmd/cuckoo: %v", err)
	}
	out := filepath.Join(t.TempDir(), "cuckoo.json")
	cmd := exec.Command(goBin, "run", "./cmd/cuckoo", "bench", "-sizes", "4k", "-goroutines", "1,2", "-modes", "lockfree",
		"-bits", "12", "-impls", "all", "-ops", "5000", "-reps", "2", "-json", out)
	cmd.Dir = filepath.Join("..", "..")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cuckoo bench: %v\n%s", err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var theirs Report
	if err := json.Unmarshal(data, &theirs); err != nil {
		t.Fatal(err)
	}

	ours, err := Run(Config{Sizes: []Size{{Name: "4k", N: 4 << 10}}, Goroutines: []int{1, 2}, Ops: 5000, Reps: 2, Duration: time.Second},
		Select(All(), []string{"cuckoo-lockfree-f12", "map-rwmutex", "probe"}))
	if err != nil {
		t.Fatal(err)
	}
	name := func(s string) string {
		if strings.HasPrefix(s, "lock") {
			return "cuckoo-" + s
		}
		return s
	}
	if len(theirs.Cells) != len(ours.Cells) || len(theirs.Cells) != 4*(4+4)-2 {
		t.Errorf("cuckoo bench: %d cells, compare: %d; want %d each", len(theirs.Cells), len(ours.Cells), 4*(4+4)-2)
	}
	for _, c := range theirs.Cells {
		o := ours.Find(name(c.Impl), c.Size, c.Workload, c.Goroutines)
		if o == nil {
			t.Errorf("%s %s g=%d: not in the comparison", c.Impl, c.Workload, c.Goroutines)
			continue
		}
		type counts struct {
			N, Reps                                  int
			Ops, InsertFailed, DeleteMissed, Skipped int64
			Load, FPR                                float64
		}
		a := counts{c.N, c.Reps, c.Ops, c.InsertFailed, c.DeleteMissed, c.Skipped, c.Load, c.FPR}
		b := counts{o.N, o.Reps, o.Ops, o.InsertFailed, o.DeleteMissed, o.Skipped, o.Load, o.FPR}
		if a != b {
			t.Errorf("%s %s g=%d: cuckoo bench %+v; compare %+v", c.Impl, c.Workload, c.Goroutines, a, b)
		}
		// Concurrent mixed lookups may meet a key another goroutine has
		// just deleted; every other hit count is fixed by the keys.
		if c.Hits != o.Hits && (c.Workload != Mixed || c.Goroutines == 1) {
			t.Errorf("%s %s g=%d: %d hits; compare %d", c.Impl, c.Workload, c.Goroutines, c.Hits, o.Hits)
		}
		if c.Ops == 0 {
			t.Errorf("%s %s g=%d: no operations", c.Impl, c.Workload, c.Goroutines)
		}
	}
	for _, in := range theirs.Impls {
		o := ours.Info(name(in.Impl), in.Size)
		if o == nil {
			t.Errorf("%s: not in the comparison", in.Impl)
			continue
		}
		a, b := *o, in
		a.Impl, a.HeapBytes, a.HeapBitsPerKey = b.Impl, b.HeapBytes, b.HeapBitsPerKey // the heap growth is measured, not computed
		if strings.Join(a.Notes, ";") != strings.Join(b.Notes, ";") || a.Desc != b.Desc || a.Kind != b.Kind || a.TableBytes != b.TableBytes ||
			a.FPR != b.FPR || a.FPRProbes != b.FPRProbes || a.Verified != b.Verified || a.Missing != b.Missing || a.FillFailed != b.FillFailed {
			t.Errorf("%s: cuckoo bench %+v; compare %+v", in.Impl, b, a)
		}
	}
}
