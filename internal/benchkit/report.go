package benchkit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config selects what Run measures.
type Config struct {
	Title      string // first line of the text report, e.g. "cuckoo bench"
	Command    string // the command line, for the report
	Sizes      []Size
	Goroutines []int
	Workloads  []Workload    // empty: all
	Duration   time.Duration // per cell
	Reps       int           // lookup and mixed cells: repetitions of Duration/Reps (or of Ops); rate = median
	// Ops, when positive, runs every lookup and mixed repetition for
	// exactly Ops operations and every fill cell as Reps whole fills,
	// instead of for a duration: the counts are then reproducible.
	Ops       int64
	FillLimit time.Duration // cuts off one fill; 0: none
	// MixedFill, when set, returns the keys held during the mixed workload
	// of size n instead of the package's MixedFill.
	MixedFill func(n int) int
	Ref       string    // impl every ratio column is relative to; empty: the first impl
	Header    []string  // extra lines for the report header (e.g. "rtm elision: false")
	Progress  io.Writer // progress, one line per cell; nil: none
	TTY       bool      // Progress is a terminal: redraw one line in place
}

// Machine describes where the report was measured.
type Machine struct {
	GoVersion  string `json:"go_version"`
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	CPU        string `json:"cpu"`
	NumCPU     int    `json:"num_cpu"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	// The 1-minute load average (/proc/loadavg) when the run started and
	// ended, or -1: other processes on the machine skew the numbers. Only
	// the start tells of them: by the end, the average includes the run's
	// own goroutines.
	LoadStart float64 `json:"load_start"`
	LoadEnd   float64 `json:"load_end"`
}

// Busy reports whether other processes were running when the run started:
// a 1-minute load above half the CPUs.
func (m Machine) Busy() bool { return m.LoadStart > float64(m.NumCPU)/2 }

// CPUModel returns the processor's name: /proc/cpuinfo's "model name" on
// Linux, else the architecture.
func CPUModel() string {
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

// LoadAvg returns the 1-minute load average, or -1.
func LoadAvg() float64 {
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

// ThisMachine describes the machine now.
func ThisMachine() Machine {
	return Machine{
		GoVersion:  runtime.Version(),
		GOOS:       runtime.GOOS,
		GOARCH:     runtime.GOARCH,
		CPU:        CPUModel(),
		NumCPU:     runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		LoadStart:  LoadAvg(),
		LoadEnd:    -1,
	}
}

// ImplInfo is what Run learned about one impl at one size, from a
// structure holding n keys inserted by one goroutine.
type ImplInfo struct {
	Impl            string   `json:"impl"`
	Desc            string   `json:"desc"`
	Size            string   `json:"size"`
	N               int      `json:"n"`
	Kind            string   `json:"kind"`
	TableBytes      int64    `json:"table_bytes"` // -1: unknown
	HeapBytes       int64    `json:"heap_bytes"`  // -1: not measured
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

// BitsPerKey returns the table bits per key, or the heap growth's when the
// table size is unknown, or -1.
func (in ImplInfo) BitsPerKey() float64 {
	switch {
	case in.TableBytes >= 0:
		return in.TableBitsPerKey
	case in.HeapBytes >= 0:
		return in.HeapBitsPerKey
	}
	return -1
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
	Mallocs      uint64             `json:"mallocs"`       // runtime.MemStats.Mallocs growth over the timed parts
	AllocsPerOp  float64            `json:"allocs_per_op"` // Mallocs over Ops
	Load         float64            `json:"load"`          // Len/Cap after the cell; -1: not a filter
	FPR          float64            `json:"fpr"`           // lookup-neg: hits over ops; -1: none
	Notes        []string           `json:"notes,omitempty"`
	Ratios       map[string]float64 `json:"ratios,omitempty"` // this cell's Mops / the peer's, same size, workload, goroutines
}

// Unstable reports whether the repetitions spread over more than 1.5x.
func (c Cell) Unstable() bool { return c.MopsMin > 0 && c.MopsMax > 1.5*c.MopsMin }

// Report is the outcome of Run.
type Report struct {
	Title      string     `json:"title"`
	Machine    Machine    `json:"machine"`
	Command    string     `json:"command"`
	Header     []string   `json:"header,omitempty"`
	Duration   string     `json:"duration_per_cell"`
	Reps       int        `json:"reps"`
	Ops        int64      `json:"ops_per_rep,omitempty"`
	Sizes      []Size     `json:"sizes"`
	Goroutines []int      `json:"goroutines"`
	Workloads  []Workload `json:"workloads"`
	Ref        string     `json:"ref"`
	Impls      []ImplInfo `json:"impls"`
	Cells      []Cell     `json:"cells"`
}

// Names returns the impl names in their order of measurement.
func (r *Report) Names() []string {
	var names []string
	for _, in := range r.Impls {
		if !slices.Contains(names, in.Impl) {
			names = append(names, in.Impl)
		}
	}
	return names
}

// Info returns the information on impl at size, or nil.
func (r *Report) Info(impl, size string) *ImplInfo {
	for i := range r.Impls {
		if in := &r.Impls[i]; in.Impl == impl && in.Size == size {
			return in
		}
	}
	return nil
}

// Find returns the cell of impl, or nil.
func (r *Report) Find(impl, size string, w Workload, g int) *Cell {
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Impl == impl && c.Size == size && c.Workload == w && c.Goroutines == g {
			return c
		}
	}
	return nil
}

// probeCap bounds the untimed verification and false-positive passes.
const probeCap = 1 << 23

// Plan returns the number of cells Run measures.
func Plan(cfg Config, impls []Impl) int {
	cells := 0
	for _, im := range impls {
		for _, w := range cfg.Workloads {
			for _, g := range cfg.Goroutines {
				if ok, _ := Supports(im, w, g); ok {
					cells++
				}
			}
		}
	}
	return cells * len(cfg.Sizes)
}

// Run measures every impl at every size, one impl at a time: each is built,
// measured and released (with a GC) before the next, so that only one large
// structure is alive at once.
func Run(cfg Config, impls []Impl) (*Report, error) {
	if len(impls) == 0 {
		return nil, errors.New("no implementation selected")
	}
	if cfg.Duration <= 0 {
		return nil, errors.New("duration must be positive")
	}
	cfg.Reps = max(cfg.Reps, 1)
	if len(cfg.Workloads) == 0 {
		cfg.Workloads = Workloads
	}
	if len(cfg.Goroutines) == 0 {
		cfg.Goroutines = []int{1}
	}
	rep := &Report{
		Title:      cfg.Title,
		Machine:    ThisMachine(),
		Command:    cfg.Command,
		Header:     cfg.Header,
		Duration:   cfg.Duration.String(),
		Reps:       cfg.Reps,
		Ops:        cfg.Ops,
		Sizes:      cfg.Sizes,
		Goroutines: cfg.Goroutines,
		Workloads:  cfg.Workloads,
		Ref:        cfg.Ref,
	}
	if rep.Ref == "" {
		rep.Ref = impls[0].Name
	}
	bar := &progress{w: cfg.Progress, tty: cfg.TTY, total: Plan(cfg, impls), start: time.Now()}
	for _, size := range cfg.Sizes {
		env := NewEnv(size.N)
		for _, im := range impls {
			info, cells := runImpl(cfg, env, size, im, bar)
			rep.Impls = append(rep.Impls, info)
			rep.Cells = append(rep.Cells, cells...)
			runtime.GC()
		}
	}
	bar.finish()
	rep.Machine.LoadEnd = LoadAvg()
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

// heapAlloc returns the live heap after a collection.
func heapAlloc() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

func loadOf(f Filter) float64 {
	if l, ok := f.(Loader); ok && l.Cap() > 0 {
		return float64(l.Len()) / float64(l.Cap())
	}
	return -1
}

// Median returns the median of sorted values, 0 for none.
func Median(sorted []float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// newCell summarizes the repetitions of one measurement; its rate is their
// median, which shrugs off a repetition stalled by another process.
func newCell(im Impl, w Workload, size Size, g int, reps []Result, f Filter) Cell {
	var r Result
	rates := make([]float64, len(reps))
	for i, x := range reps {
		r.Add(x)
		rates[i] = x.Mops()
	}
	slices.Sort(rates)
	c := Cell{
		Impl: im.Name, Workload: w, Size: size.Name, N: size.N, Goroutines: g,
		Ops: r.Ops, Seconds: r.Elapsed.Seconds(), Hits: r.Hits,
		Reps: len(reps), Mops: Median(rates), MopsMin: rates[0], MopsMax: rates[len(rates)-1],
		InsertFailed: r.InsertFailed, DeleteMissed: r.DeleteMissed, Skipped: r.Skipped,
		Mallocs: r.Mallocs, Load: loadOf(f), FPR: -1,
	}
	if r.Ops > 0 {
		c.AllocsPerOp = float64(r.Mallocs) / float64(r.Ops)
	}
	if w == LookupNeg && !im.Probe && r.Ops > 0 {
		c.FPR = float64(r.Hits) / float64(r.Ops)
	}
	if r.InsertFailed > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("%d inserts failed", r.InsertFailed))
	}
	if r.DeleteMissed > 0 && !im.Probe {
		c.Notes = append(c.Notes, fmt.Sprintf("%d deletes missed", r.DeleteMissed))
	}
	if r.Skipped > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("deletes unsupported: %d skipped (%.1f%% of attempted ops)",
			r.Skipped, 100*float64(r.Skipped)/float64(r.Ops+r.Skipped)))
	}
	if w == LookupPos && !im.Probe && r.Hits != r.Ops {
		c.Notes = append(c.Notes, fmt.Sprintf("FALSE NEGATIVES: %d of %d lookups missed", r.Ops-r.Hits, r.Ops))
	}
	return c
}

func runImpl(cfg Config, env *Env, size Size, im Impl, bar *progress) (ImplInfo, []Cell) {
	info := ImplInfo{Impl: im.Name, Desc: im.Desc, Size: size.Name, N: size.N, Kind: kind(im), TableBytes: -1, HeapBytes: -1}
	var cells []Cell
	want := func(w Workload) bool { return slices.Contains(cfg.Workloads, w) }
	label := func(w Workload, g int) string { return fmt.Sprintf("%s %s n=%s g=%d", im.Name, w, size.Name, g) }
	fail := func(err error) (ImplInfo, []Cell) {
		info.Error = err.Error()
		return info, cells
	}
	// timed runs the repetitions of a lookup or mixed cell.
	timed := func(f Filter, w Workload, g, filled int) []Result {
		out := make([]Result, cfg.Reps)
		for i := range out {
			runtime.GC()
			if cfg.Ops > 0 {
				out[i] = env.RunOps(f, im, w, g, filled, cfg.Ops)
			} else {
				out[i] = env.RunFor(f, im, w, g, filled, cfg.Duration/time.Duration(cfg.Reps))
			}
		}
		return out
	}

	// Fill: a fresh structure per repetition until Duration is spent (at
	// least one; Reps of them with Ops), each cut off after FillLimit.
	for _, g := range cfg.Goroutines {
		if ok, _ := Supports(im, Fill, g); !ok || !want(Fill) {
			continue
		}
		bar.step(label(Fill, g))
		var spent time.Duration
		var reps []Result
		var f Filter
		note := ""
		for len(reps) == 0 || cfg.Ops <= 0 && spent < cfg.Duration || cfg.Ops > 0 && len(reps) < cfg.Reps {
			f = nil
			if env.N >= 1<<22 {
				runtime.GC()
			}
			var r Result
			var err error
			if im.Static {
				f, r, err = env.Build(im, env.N)
			} else if f, err = im.New(env.N, nil); err == nil {
				r = env.RunFor(f, im, Fill, g, 0, cfg.FillLimit)
			}
			if err != nil {
				return fail(err)
			}
			reps = append(reps, r)
			spent += r.Elapsed
			if r.Ops != int64(env.N) {
				note = fmt.Sprintf("cut off after %v at %.0f%% of n", cfg.FillLimit, 100*float64(r.Ops)/float64(env.N))
				break
			}
		}
		c := newCell(im, Fill, size, g, reps, f)
		if im.Static {
			c.Notes = append(c.Notes, "build from all keys (ops = keys)")
		}
		if note != "" {
			c.Notes = append(c.Notes, note)
		}
		cells = append(cells, c)
		bar.done++
	}

	// The structure the lookups run on, filled by one goroutine, and its
	// size: the table from its parameters, and the heap growth.
	h0 := heapAlloc()
	f, r, err := env.Build(im, env.N)
	if err != nil {
		return fail(err)
	}
	info.HeapBytes = heapAlloc() - h0
	info.HeapBitsPerKey = 8 * float64(info.HeapBytes) / float64(env.N)
	info.FillFailed = r.InsertFailed
	if ts, ok := f.(TableSizer); ok {
		info.TableBytes = ts.TableBytes()
	}
	if info.TableBytes >= 0 {
		info.TableBitsPerKey = 8 * float64(info.TableBytes) / float64(env.N)
	}
	if info.FillFailed > 0 {
		info.Notes = append(info.Notes, fmt.Sprintf("fill: %d inserts failed", info.FillFailed))
	}

	// Untimed checks, one key at a time: every inserted key is found; the
	// false-positive rate.
	if !im.Probe {
		plain := im
		plain.Batch = false
		probes := min(env.N, probeCap)
		pos := env.RunOps(f, plain, LookupPos, 1, probes, int64(probes))
		neg := env.RunOps(f, plain, LookupNeg, 1, env.N, int64(probes))
		info.Verified, info.Missing = pos.Ops, pos.Ops-pos.Hits
		info.FPR, info.FPRProbes = float64(neg.Hits)/float64(neg.Ops), neg.Ops
		if info.Missing > 0 && info.FillFailed == 0 {
			info.Notes = append(info.Notes, fmt.Sprintf("FALSE NEGATIVES: %d of %d inserted keys not found", info.Missing, info.Verified))
		}
	}

	for _, w := range []Workload{LookupPos, LookupNeg} {
		for _, g := range cfg.Goroutines {
			if ok, _ := Supports(im, w, g); !ok || !want(w) {
				continue
			}
			bar.step(label(w, g))
			cells = append(cells, newCell(im, w, size, g, timed(f, w, g, env.N), f))
			bar.done++
		}
	}

	if ok, _ := Supports(im, Mixed, 1); ok && want(Mixed) {
		f = nil
		runtime.GC()
		fill := MixedFill(env.N)
		if cfg.MixedFill != nil {
			fill = cfg.MixedFill(env.N)
		}
		if f, _, err = env.Build(im, fill); err != nil {
			return fail(err)
		}
		for _, g := range cfg.Goroutines {
			if ok, _ := Supports(im, Mixed, g); !ok {
				continue
			}
			bar.step(label(Mixed, g))
			cells = append(cells, newCell(im, Mixed, size, g, timed(f, Mixed, g, fill), f))
			bar.done++
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

// progress draws "[####....] done/total cells, ETA  what": redrawn in place
// on a terminal, one line per cell elsewhere.
type progress struct {
	w     io.Writer
	tty   bool
	total int
	done  int
	start time.Time
}

func (p *progress) step(what string) {
	if p.w == nil {
		return
	}
	const width = 30
	fill := min(width*p.done/max(p.total, 1), width)
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

func (p *progress) finish() {
	if p.w == nil {
		return
	}
	p.step("done")
	if p.tty {
		fmt.Fprintln(p.w)
	}
}
