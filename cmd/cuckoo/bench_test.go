package main

import (
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed25b00da8/cuckoo"
)

// benchRow is one parsed line of the bench table.
type benchRow struct {
	impl, workload, size string
	g                    int
	mops, ratio, allocs  string
	bits, load, fpr      string
	notes                string
}

// parseBenchTable returns the header lines before the table and its rows.
func parseBenchTable(t *testing.T, out string) (header []string, rows []benchRow) {
	t.Helper()
	lines := strings.Split(out, "\n")
	i := 0
	for ; i < len(lines); i++ {
		f := strings.Fields(lines[i])
		if len(f) > 0 && f[0] == "impl" && slices.Contains(f, "Mops/s") {
			break
		}
		header = append(header, lines[i])
	}
	if i == len(lines) {
		t.Fatalf("no table in output:\n%s", out)
	}
	for _, line := range lines[i+1:] {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 10 {
			t.Fatalf("short table line %q", line)
		}
		g, err := strconv.Atoi(f[3])
		if err != nil {
			t.Fatalf("goroutines column of %q: %v", line, err)
		}
		rows = append(rows, benchRow{impl: f[0], workload: f[1], size: f[2], g: g, mops: f[4], ratio: f[5],
			allocs: f[6], bits: f[7], load: f[8], fpr: f[9], notes: strings.Join(f[10:], " ")})
	}
	return header, rows
}

func percent(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil || !strings.HasSuffix(s, "%") {
		t.Fatalf("not a percentage: %q", s)
	}
	return v
}

// quickBench are the flags of a short run.
var quickBench = []string{"bench", "-sizes", "10k", "-goroutines", "1,3", "-duration", "20ms", "-progress"}

func TestBenchEndToEnd(t *testing.T) {
	svgPath := filepath.Join(t.TempDir(), "bench.svg")
	status, stdout, stderr := runCmd(t, "", append(quickBench, "-svg", svgPath)...)
	if status != exitOK {
		t.Fatalf("status %d, stderr:\n%s", status, stderr)
	}
	header, rows := parseBenchTable(t, stdout)
	head := strings.Join(header, "\n")
	for _, want := range []string{
		"cpu: " + cpuModel(),
		fmt.Sprintf("goos/goarch: %s/%s", runtime.GOOS, runtime.GOARCH),
		fmt.Sprintf("GOMAXPROCS: %d", runtime.GOMAXPROCS(0)),
		fmt.Sprintf("NumCPU: %d", runtime.NumCPU()),
		"go: " + runtime.Version(),
		fmt.Sprintf("rtm elision: %v", cuckoo.RTMActive()),
	} {
		if !strings.Contains(head, want) {
			t.Errorf("header lacks %q:\n%s", want, head)
		}
	}
	if !strings.Contains(stderr, "/72 cells") { // 2 goroutine counts x (4 filters x 7 cells + map 4 + probe 4)
		t.Errorf("no progress on stderr with -progress:\n%s", stderr)
	}

	// Exactly one row per requested cell.
	cuckoos := []string{"lockfree-f12", "lockfree-f8", "locked-f12", "locked-f8"}
	type cell struct {
		impl, w string
		g       int
	}
	want := map[cell]bool{}
	for _, g := range []int{1, 3} {
		for _, w := range []string{"fill", "lookup-pos", "lookup-neg", "mixed"} {
			for _, impl := range append(slices.Clone(cuckoos), "map-rwmutex", "probe") {
				want[cell{impl, w, g}] = true
			}
		}
		for _, w := range []string{"fill", "lookup-pos", "lookup-neg"} {
			for _, impl := range cuckoos {
				want[cell{impl + "-batch", w, g}] = true
			}
		}
	}
	got := map[cell]bool{}
	for _, r := range rows {
		c := cell{r.impl, r.workload, r.g}
		if got[c] {
			t.Errorf("cell %v printed twice", c)
		}
		got[c] = true
		if !want[c] {
			t.Errorf("unexpected row %+v", r)
		}
		if r.size != "10k" {
			t.Errorf("row %v: size %q, want 10k", c, r.size)
		}
		if m, err := strconv.ParseFloat(r.mops, 64); err != nil || m <= 0 {
			t.Errorf("row %v: Mops/s %q", c, r.mops)
		}
		isCuckoo := strings.HasPrefix(r.impl, "lock")
		switch {
		case r.impl == refName:
			if r.ratio != "1.00" {
				t.Errorf("reference row %v: ratio %q, want 1.00", c, r.ratio)
			}
		default:
			if v, err := strconv.ParseFloat(r.ratio, 64); err != nil || v <= 0 {
				t.Errorf("row %v: ratio %q", c, r.ratio)
			}
		}
		if isCuckoo {
			if r.allocs != "0.00" {
				t.Errorf("row %v: allocs/op %q, want 0.00", c, r.allocs)
			}
			if r.bits != "16.8" {
				t.Errorf("row %v: bits/key %q, want 16.8 (64-bit buckets at 95%% load)", c, r.bits)
			}
			switch r.workload {
			case "fill", "lookup-pos", "lookup-neg":
				// The fill reaches 95% load: n keys in a filter sized for n.
				if l := percent(t, r.load); l < 94.5 || l > 95.5 {
					t.Errorf("row %v: load %q, want 95%%", c, r.load)
				}
			case "mixed":
				if l := percent(t, r.load); l < 89 || l > 90.5 {
					t.Errorf("row %v: load %q, want 90%%", c, r.load)
				}
			}
			if strings.Contains(r.notes, "FALSE NEGATIVES") || strings.Contains(r.notes, "failed") || strings.Contains(r.notes, "missed") {
				t.Errorf("row %v: notes %q", c, r.notes)
			}
		} else if r.load != "-" {
			t.Errorf("row %v: load %q for a non-filter", c, r.load)
		}
		// FPR only for negative lookups of filters and the map.
		switch {
		case r.workload != "lookup-neg" || r.impl == "probe":
			if r.fpr != "-" {
				t.Errorf("row %v: FPR %q, want -", c, r.fpr)
			}
		case strings.Contains(r.impl, "-f12"):
			if v := percent(t, r.fpr); v < 0.05 || v > 0.5 {
				t.Errorf("row %v: FPR %q, want about 0.19%%", c, r.fpr)
			}
		case strings.Contains(r.impl, "-f8"):
			if v := percent(t, r.fpr); v < 1.5 || v > 5 {
				t.Errorf("row %v: FPR %q, want about 3%%", c, r.fpr)
			}
		case r.impl == "map-rwmutex":
			if v := percent(t, r.fpr); v != 0 {
				t.Errorf("row %v: FPR %q, want 0", c, r.fpr)
			}
		}
	}
	for c := range want {
		if !got[c] {
			t.Errorf("missing row %v", c)
		}
	}

	// The chart: well-formed, one polyline per implementation per chart.
	doc := parseSVG(t, svgPath)
	if len(doc.charts) != 4 {
		t.Fatalf("%d charts, want 4 (one per workload)", len(doc.charts))
	}
	for _, ch := range doc.charts {
		wantImpls := append(slices.Clone(cuckoos), "map-rwmutex", "probe")
		if ch.workload != "mixed" {
			for _, impl := range cuckoos {
				wantImpls = append(wantImpls, impl+"-batch")
			}
		}
		slices.Sort(wantImpls)
		gotImpls := slices.Clone(ch.polylines)
		slices.Sort(gotImpls)
		if !slices.Equal(gotImpls, wantImpls) {
			t.Errorf("chart %s: polylines %v, want one each for %v", ch.workload, gotImpls, wantImpls)
		}
		for _, p := range ch.points {
			if n := len(strings.Fields(p)); n != 2 {
				t.Errorf("chart %s: polyline with %d points, want 2 (goroutines 1 and 3): %q", ch.workload, n, p)
			}
		}
	}
}

func TestBenchSelection(t *testing.T) {
	status, stdout, stderr := runCmd(t, "", "bench", "-sizes", "4k,8k", "-goroutines", "2", "-duration", "10ms",
		"-modes", "locked", "-bits", "8", "-impls", "cuckoo,map", "-workloads", "lookup-neg,fill", "-reps", "1")
	if status != exitOK {
		t.Fatalf("status %d, stderr:\n%s", status, stderr)
	}
	_, rows := parseBenchTable(t, stdout)
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%s %s %s %d", r.impl, r.workload, r.size, r.g))
		// No lockfree-f12 row: no reference to compare with.
		if r.ratio != "-" {
			t.Errorf("row %+v: ratio %q without a reference row", r, r.ratio)
		}
	}
	want := []string{
		"locked-f8 fill 4k 2", "map-rwmutex fill 4k 2",
		"locked-f8 lookup-neg 4k 2", "map-rwmutex lookup-neg 4k 2",
		"locked-f8 fill 8k 2", "map-rwmutex fill 8k 2",
		"locked-f8 lookup-neg 8k 2", "map-rwmutex lookup-neg 8k 2",
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if stderr != "" {
		t.Errorf("progress on stderr without -progress or a terminal:\n%s", stderr)
	}
}

func TestBenchUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-sizes", "0"}, "-sizes"},
		{[]string{"-sizes", "1X"}, "-sizes"},
		{[]string{"-sizes", ","}, "-sizes"},
		{[]string{"-goroutines", "0"}, "-goroutines"},
		{[]string{"-goroutines", "two"}, "-goroutines"},
		{[]string{"-modes", "wait-free"}, "-modes"},
		{[]string{"-bits", "16"}, "-bits"},
		{[]string{"-impls", "bloom"}, "-impls"},
		{[]string{"-workloads", "scan"}, "-workloads"},
		{[]string{"-duration", "0s"}, "-duration"},
		{[]string{"-duration", "soon"}, "invalid value"},
		{[]string{"-reps", "0"}, "-reps"},
		{[]string{"-nosuchflag"}, "flag provided but not defined"},
		{[]string{"extra"}, "want 0 arguments, got 1"},
	} {
		t.Run(strings.Join(tc.args, "_"), func(t *testing.T) {
			status, stdout, stderr := runCmd(t, "", append([]string{"bench"}, tc.args...)...)
			if status != exitUsage || stdout != "" || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "usage: cuckoo bench") {
				t.Errorf("status %d, stdout %q, stderr:\n%s\nwant %d, nothing, and %q with the usage", status, stdout, stderr, exitUsage, tc.want)
			}
		})
	}
	status, stdout, _ := runCmd(t, "", "help", "bench")
	if status != exitOK || !strings.Contains(stdout, "-goroutines") {
		t.Errorf("help bench: status %d, stdout %q", status, stdout)
	}
	_, _, stderr := runCmd(t, "")
	if !strings.Contains(stderr, "cuckoo bench ") {
		t.Errorf("usage does not list bench:\n%s", stderr)
	}
}

// TestBenchFill checks the fill workload on its own: n keys in a filter
// made by New(n) are 95% of its slots, with no failed insert.
func TestBenchFill(t *testing.T) {
	for _, n := range []int{1, 19, 1000, 10 << 10} {
		for _, g := range []int{1, 7} {
			f, err := cuckoo.New(n)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := f.Cap(), 4*filterBuckets(n); got != want {
				t.Errorf("n=%d: Cap %d, filterBuckets says %d slots", n, got, want)
			}
			r := job{t: f, w: wFill, g: g, n: n}.run()
			if r.ops != int64(n) || r.insertFailed != 0 || f.Len() != n {
				t.Errorf("n=%d g=%d: %d ops, %d failed, Len %d; want %d inserts", n, g, r.ops, r.insertFailed, f.Len(), n)
			}
			if l := loadOf(f); n >= 1000 && (l < 0.945 || l > 0.955) {
				t.Errorf("n=%d g=%d: load %.4f after the fill, want 0.95", n, g, l)
			}
		}
	}
}

// allocTarget allocates on every lookup: the allocation count must see it.
type allocTarget struct{ sink []*[8]byte }

func (a *allocTarget) Insert([]byte) error { return nil }
func (a *allocTarget) Delete([]byte) bool  { return true }
func (a *allocTarget) Lookup(key []byte) bool {
	p := new([8]byte)
	copy(p[:], key)
	a.sink = append(a.sink[:0], p)
	return p[0] == 1
}

func TestBenchAllocsCounted(t *testing.T) {
	r := job{t: &allocTarget{}, w: wLookupPos, g: 1, n: 100, filled: 100, d: 5 * time.Millisecond}.run()
	if r.ops == 0 {
		t.Fatal("no operations")
	}
	if a := float64(r.mallocs) / float64(r.ops); a < 0.99 || a > 1.5 {
		t.Errorf("%.3f allocs/op measured, want 1", a)
	}
	if got := formatAllocs(float64(r.mallocs) / float64(r.ops)); got == "0.00" {
		t.Errorf("allocating lookups reported as %s allocs/op", got)
	}
	f, err := cuckoo.New(1000)
	if err != nil {
		t.Fatal(err)
	}
	job{t: f, w: wFill, g: 1, n: 1000}.run()
	r = job{t: f, w: wLookupPos, g: 2, n: 1000, filled: 1000, d: 5 * time.Millisecond}.run()
	if got := formatAllocs(float64(r.mallocs) / float64(r.ops)); got != "0.00" {
		t.Errorf("filter lookups: %s allocs/op (%d in %d ops), want 0.00", got, r.mallocs, r.ops)
	}
}

func TestBenchParse(t *testing.T) {
	sizes, err := parseSizes("10k, 1M,32M,3")
	if err != nil {
		t.Fatal(err)
	}
	want := []size{{"10k", 10 << 10}, {"1M", 1 << 20}, {"32M", 32 << 20}, {"3", 3}}
	if !slices.Equal(sizes, want) {
		t.Errorf("parseSizes: %v, want %v", sizes, want)
	}
	if gs, err := parseGoroutines("64,1,2,2"); err != nil || !slices.Equal(gs, []int{1, 2, 64}) {
		t.Errorf("parseGoroutines: %v, %v", gs, err)
	}
	if b, err := parseBits("8,12"); err != nil || !slices.Equal(b, []int{12, 8}) {
		t.Errorf("parseBits: %v, %v; want 12 first", b, err)
	}
	if w, err := parseWorkloads("mixed,fill"); err != nil || !slices.Equal(w, []workload{wFill, wMixed}) {
		t.Errorf("parseWorkloads: %v, %v; want run order", w, err)
	}
}
