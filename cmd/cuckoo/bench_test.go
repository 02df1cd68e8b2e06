package main

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed25b00da8/cuckoo"
	"github.com/seed25b00da8/cuckoo/internal/benchimpl"
	"github.com/seed25b00da8/cuckoo/internal/benchkit"
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
		"cpu: " + benchkit.CPUModel(),
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
			// Race builds lease a descriptor per relocation (kcas.go): a
			// LockFree fill allocates there.
			if r.allocs != "0.00" && !raceEnabled {
				t.Errorf("row %v: allocs/op %q, want 0.00", c, r.allocs)
			}
			// One 64-bit word per bucket: five 12-bit slots sized for
			// 97% load, four 15-bit slots for 95%; 8-bit ones packed.
			wantBits, full := "16.8", 95.0
			if strings.Contains(r.impl, "-f12") {
				wantBits, full = "13.2", 97.0
			}
			if strings.Contains(r.impl, "-f8") {
				// Two four-slot buckets per word, sized for 92%.
				wantBits, full = "8.7", 92.0
			}
			if r.bits != wantBits {
				t.Errorf("row %v: bits/key %q, want %s (64-bit buckets at %v%% load)", c, r.bits, wantBits, full)
			}
			switch r.workload {
			case "fill", "lookup-pos", "lookup-neg":
				// The fill reaches the target load: n keys in a filter sized for n.
				if l := percent(t, r.load); l < full-0.5 || l > full+0.5 {
					t.Errorf("row %v: load %q, want %v%%", c, r.load, full)
				}
			case "mixed":
				// 5% of the keys are deleted before the mix starts.
				if l := percent(t, r.load); l < full*0.94 || l > full*0.955 {
					t.Errorf("row %v: load %q, want %.1f%%", c, r.load, full*0.95)
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
				t.Errorf("row %v: FPR %q, want about 0.24%%", c, r.fpr)
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

	// The chart: well-formed, one panel per workload, one polyline per
	// implementation in each (the chart itself is tested in benchkit).
	doc := readChart(t, svgPath)
	if len(doc.charts) != 4 {
		t.Fatalf("%d charts, want 4 (one per workload)", len(doc.charts))
	}
	for _, ch := range doc.charts {
		wantImpls := append(slices.Clone(cuckoos), "map-rwmutex", "probe")
		if ch.Workload != "mixed" {
			for _, impl := range cuckoos {
				wantImpls = append(wantImpls, impl+"-batch")
			}
		}
		slices.Sort(wantImpls)
		var gotImpls []string
		for _, p := range ch.Polylines {
			gotImpls = append(gotImpls, p.Impl)
			if n := len(strings.Fields(p.Points)); n != 2 {
				t.Errorf("chart %s: polyline with %d points, want 2 (goroutines 1 and 3): %q", ch.Workload, n, p.Points)
			}
		}
		slices.Sort(gotImpls)
		if !slices.Equal(gotImpls, wantImpls) {
			t.Errorf("chart %s: polylines %v, want one each for %v", ch.Workload, gotImpls, wantImpls)
		}
	}
}

// chartFile is what the end-to-end test reads from a chart.
type chartFile struct {
	charts []chartGroup // the top-level groups of class "chart"
}

type chartGroup struct {
	Class     string `xml:"class,attr"`
	Workload  string `xml:"data-workload,attr"`
	Polylines []struct {
		Impl   string `xml:"data-impl,attr"`
		Points string `xml:"points,attr"`
	} `xml:"polyline"`
}

func readChart(t *testing.T, path string) chartFile {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var root struct {
		XMLName xml.Name
		Groups  []chartGroup `xml:"g"`
	}
	if err := xml.Unmarshal(data, &root); err != nil {
		t.Fatalf("chart is not well-formed XML: %v", err)
	}
	if root.XMLName.Local != "svg" {
		t.Fatalf("chart root %v, want svg", root.XMLName)
	}
	var doc chartFile
	for _, g := range root.Groups {
		if g.Class == "chart" {
			doc.charts = append(doc.charts, g)
		}
	}
	return doc
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
// made by New(n), with no failed insert, are about 97% of its slots once
// the table is large enough for its 35 spare slots not to matter.
func TestBenchFill(t *testing.T) {
	for _, n := range []int{1, 19, 1000, 10 << 10} {
		for _, g := range []int{1, 7} {
			for _, batch := range []bool{false, true} {
				im := benchimpl.Cuckoo("", cuckoo.LockFree, 12, batch)
				f, err := im.New(n, nil)
				if err != nil {
					t.Fatal(err)
				}
				cf := f.(benchimpl.Filter)
				if got, want := cf.Cap(), 5*benchimpl.Buckets(n); got != want {
					t.Errorf("n=%d: Cap %d, Buckets says %d slots", n, got, want)
				}
				r := benchkit.NewEnv(n).RunFor(f, im, benchkit.Fill, g, 0, 0)
				if r.Ops != int64(n) || r.InsertFailed != 0 || cf.Len() != n {
					t.Errorf("n=%d g=%d batch=%v: %d ops, %d failed, Len %d; want %d inserts", n, g, batch, r.Ops, r.InsertFailed, cf.Len(), n)
				}
				if l := cf.LoadFactor(); n >= 10000 && (l < 0.96 || l > 0.975) {
					t.Errorf("n=%d g=%d: load %.4f after the fill, want 0.97", n, g, l)
				}
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
	r := benchkit.NewEnv(100).RunFor(&allocTarget{}, benchkit.Impl{Name: "alloc"}, benchkit.LookupPos, 1, 100, 5*time.Millisecond)
	if r.Ops == 0 {
		t.Fatal("no operations")
	}
	if a := float64(r.Mallocs) / float64(r.Ops); a < 0.99 || a > 1.5 {
		t.Errorf("%.3f allocs/op measured, want 1", a)
	}
	if got := benchkit.FormatAllocs(float64(r.Mallocs) / float64(r.Ops)); got == "0.00" {
		t.Errorf("allocating lookups reported as %s allocs/op", got)
	}
	env := benchkit.NewEnv(1000)
	for _, im := range []benchkit.Impl{benchimpl.Cuckoo("", cuckoo.LockFree, 12, false), benchimpl.Cuckoo("", cuckoo.Locked, 8, true)} {
		f, _, err := env.Build(im, 1000)
		if err != nil {
			t.Fatal(err)
		}
		r = env.RunFor(f, im, benchkit.LookupPos, 2, 1000, 5*time.Millisecond)
		if got := benchkit.FormatAllocs(float64(r.Mallocs) / float64(r.Ops)); got != "0.00" {
			t.Errorf("%s lookups: %s allocs/op (%d in %d ops), want 0.00", im.Name, got, r.Mallocs, r.Ops)
		}
	}
}

func TestBenchParse(t *testing.T) {
	sizes, err := benchkit.ParseSizes("10k, 1M,32M,3,1000000", cuckoo.MaxCapacity)
	if err != nil {
		t.Fatal(err)
	}
	want := []benchkit.Size{{Name: "10k", N: 10 << 10}, {Name: "1M", N: 1 << 20}, {Name: "32M", N: 32 << 20}, {Name: "3", N: 3}, {Name: "1000000", N: 1000000}}
	if !slices.Equal(sizes, want) {
		t.Errorf("ParseSizes: %v, want %v", sizes, want)
	}
	if _, err := benchkit.ParseSizes("1G", cuckoo.MaxCapacity); cuckoo.MaxCapacity < 1<<30 && err == nil {
		t.Errorf("ParseSizes(1G) above MaxCapacity %d: no error", cuckoo.MaxCapacity)
	}
	if b, err := parseBits("8,12"); err != nil || !slices.Equal(b, []int{12, 8}) {
		t.Errorf("parseBits(8,12) = %v, %v", b, err)
	}
	if b, err := parseBits("8,4x12,15,12"); err != nil || !slices.Equal(b, []int{12, 15, benchimpl.F12x4, 8}) {
		t.Errorf("parseBits: %v, %v; want 12 first", b, err)
	}
	if b, err := parseBits("5x12,12"); err != nil || !slices.Equal(b, []int{12}) {
		t.Errorf("parseBits(5x12,12) = %v, %v; want [12] (5x12 is 12)", b, err)
	}
	if m, err := parseModes("locked,lockfree,locked"); err != nil || !slices.Equal(m, []cuckoo.Mode{cuckoo.Locked, cuckoo.LockFree}) {
		t.Errorf("parseModes: %v, %v", m, err)
	}
}

// TestBenchHelpSizes checks that the help says what the size suffixes mean.
func TestBenchHelpSizes(t *testing.T) {
	_, stdout, _ := runCmd(t, "", "help", "bench")
	for _, want := range []string{"M = 2^20", "1048576", "1000000"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("help bench lacks %q:\n%s", want, stdout)
		}
	}
	_, _, stderr := runCmd(t, "")
	for _, flag := range []string{"-impls", "-workloads", "-reps", "-progress", "-svg", "-json", "-ops"} {
		if !strings.Contains(stderr, "cuckoo bench ") || !strings.Contains(stderr, flag) {
			t.Errorf("usage line of bench lacks %s:\n%s", flag, stderr)
		}
	}
}

// TestBenchOutputChecked checks that an output path that cannot be written
// fails before the run, and that a failed run leaves an existing file alone.
func TestBenchOutputChecked(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ flag, path string }{
		{"-svg", filepath.Join(dir, "no", "such", "dir", "x.svg")},
		{"-svg", dir},
		{"-json", filepath.Join(dir, "missing", "x.json")},
	} {
		start := time.Now()
		// A long -duration: the run must not start.
		status, stdout, stderr := runCmd(t, "", "bench", "-sizes", "1k", "-duration", "1h", tc.flag, tc.path)
		if status != exitError || stdout != "" || !strings.Contains(stderr, tc.path) {
			t.Errorf("%s %s: status %d, stdout %q, stderr %q; want %d, nothing, and an error naming the path", tc.flag, tc.path, status, stdout, stderr, exitError)
		}
		if el := time.Since(start); el > 30*time.Second {
			t.Errorf("%s %s: failed after %v, want before the run", tc.flag, tc.path, el)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("failed runs left files behind: %v", entries)
	}
}
