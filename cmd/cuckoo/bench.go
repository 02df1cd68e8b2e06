package main

// The bench subcommand: throughput of this filter's modes next to the exact
// set people use instead (a Go map under a sync.RWMutex) and the memory
// ceiling of a two-bucket lookup, on in-memory structures, with no setup.
// The runner, the adapters and the reports are shared with the comparison
// module (bench/compare): internal/benchkit and internal/benchimpl.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/seed25b00da8/cuckoo"
	"github.com/seed25b00da8/cuckoo/internal/benchimpl"
	"github.com/seed25b00da8/cuckoo/internal/benchkit"
)

func init() {
	commands["bench"] = command{
		synopsis: "[-sizes LIST] [-goroutines LIST] [-modes LIST] [-bits LIST] [-impls LIST] [-workloads LIST] [-duration D] [-reps N] [-ops N] [-svg FILE] [-json FILE] [-progress]",
		summary:  "measure throughput of in-memory filters against a locked map and a memory probe",
		run:      runBench,
	}
}

// Implementation kinds, as selected by -impls.
const (
	kindCuckoo = "cuckoo" // Insert, Lookup, Delete of this filter
	kindBatch  = "batch"  // the same filter, fills through InsertBatch and lookups through LookupBatch
	kindMap    = "map"    // map[uint64]struct{} under a sync.RWMutex
	kindProbe  = "probe"  // two random loads per op from a bucket-sized table
)

var allKinds = []string{kindCuckoo, kindBatch, kindMap, kindProbe}

// refName is the row every ratio is relative to.
const refName = "lockfree-f12"

// benchImpls lists the implementations selected by the flags, in row order:
// each filter row followed by its batch row, then the map and the probe.
func benchImpls(modes []cuckoo.Mode, fbits []int, kinds map[string]bool) []benchkit.Impl {
	var out []benchkit.Impl
	for _, m := range modes {
		for _, b := range fbits {
			if kinds[kindCuckoo] {
				out = append(out, benchimpl.Cuckoo("", m, b, false))
			}
			if kinds[kindBatch] {
				out = append(out, benchimpl.Cuckoo("", m, b, true))
			}
		}
	}
	if kinds[kindMap] {
		out = append(out, benchimpl.LockedMap())
	}
	if kinds[kindProbe] {
		out = append(out, benchimpl.Probe())
	}
	return out
}

func parseModes(s string) ([]cuckoo.Mode, error) {
	var out []cuckoo.Mode
	for _, f := range benchkit.SplitList(s) {
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

// parseBits parses fingerprint sizes (layout values of benchimpl: "4x12"
// is four 12-bit slots per bucket); 12 comes first, as the reference, then
// the others from the largest down.
func parseBits(s string) ([]int, error) {
	var out []int
	for _, f := range benchkit.SplitList(s) {
		v, ok := benchimpl.ParseLayout(f)
		if !ok {
			return nil, fmt.Errorf("bad fingerprint size %q (want 8, 12, 5x12, 4x12 or 15)", f)
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no fingerprint sizes")
	}
	slices.SortFunc(out, func(a, b int) int {
		if (a == cuckoo.DefaultFingerprintBits) != (b == cuckoo.DefaultFingerprintBits) {
			if a == cuckoo.DefaultFingerprintBits {
				return -1
			}
			return 1
		}
		if benchimpl.LayoutBits(a) != benchimpl.LayoutBits(b) {
			return benchimpl.LayoutBits(b) - benchimpl.LayoutBits(a)
		}
		return a - b
	})
	return out, nil
}

func parseKinds(s string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, f := range benchkit.SplitList(s) {
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
	sizes := fs.String("sizes", defaultSizes, "comma-separated key counts: "+benchkit.SizeHelp+", e.g. 1M,32M")
	gs := fs.String("goroutines", defaultGoroutines, "comma-separated goroutine counts")
	modes := fs.String("modes", "lockfree,locked", "filter modes: lockfree, locked")
	fbits := fs.String("bits", "12,8", "fingerprint sizes: 8, 12 or 5x12 (five per bucket), 4x12 (four 12-bit per bucket), 15")
	impls := fs.String("impls", strings.Join(allKinds, ","), "implementations: cuckoo (Insert/Lookup/Delete), batch (fills through InsertBatch, lookups through LookupBatch), map (map under sync.RWMutex), probe (memory probe), or all")
	wls := fs.String("workloads", benchkit.JoinWorkloads(benchkit.Workloads), "workloads")
	dur := fs.Duration("duration", defaultDuration, "time per cell")
	reps := fs.Int("reps", defaultReps, "runs per cell (lookups and mixed: each duration/reps long); the rate is their median, the chart shows their spread")
	ops := fs.Int64("ops", 0, "if positive, run each lookup and mixed repetition for exactly `N` operations and each fill cell as -reps whole fills, instead of for -duration (reproducible counts)")
	svg := fs.String("svg", "", "also write a chart of Mops/s against goroutines to `FILE` (SVG)")
	jsonOut := fs.String("json", "", "also write the report as JSON to `FILE`")
	showProgress := fs.Bool("progress", false, "show progress on standard error (default: when it is a terminal)")
	if _, status, ok := parseFlags(fs, args, 0, 0); !ok {
		return status
	}
	cfg := benchkit.Config{Title: "cuckoo bench", Duration: *dur, Reps: *reps, Ops: *ops, Ref: refName, Header: benchimpl.Header(),
		Command: strings.Join(append([]string{"cuckoo"}, args...), " ")}
	var err error
	bad := func(err error) int {
		fmt.Fprintf(stderr, "cuckoo bench: %v\n", err)
		fs.Usage()
		return exitUsage
	}
	if cfg.Sizes, err = benchkit.ParseSizes(*sizes, cuckoo.MaxCapacity); err != nil {
		return bad(fmt.Errorf("-sizes: %v", err))
	}
	if cfg.Goroutines, err = benchkit.ParseGoroutines(*gs); err != nil {
		return bad(fmt.Errorf("-goroutines: %v", err))
	}
	m, err := parseModes(*modes)
	if err != nil {
		return bad(fmt.Errorf("-modes: %v", err))
	}
	b, err := parseBits(*fbits)
	if err != nil {
		return bad(fmt.Errorf("-bits: %v", err))
	}
	kinds, err := parseKinds(*impls)
	if err != nil {
		return bad(fmt.Errorf("-impls: %v", err))
	}
	if cfg.Workloads, err = benchkit.ParseWorkloads(*wls); err != nil {
		return bad(fmt.Errorf("-workloads: %v", err))
	}
	if *dur <= 0 {
		return bad(fmt.Errorf("-duration must be positive, got %v", *dur))
	}
	if *reps < 1 {
		return bad(fmt.Errorf("-reps must be at least 1, got %d", *reps))
	}
	if *ops < 0 {
		return bad(fmt.Errorf("-ops must not be negative, got %d", *ops))
	}
	if *showProgress || isTerminal(stderr) {
		cfg.Progress, cfg.TTY = stderr, isTerminal(stderr)
	}
	// The output files are created before the run: a path that cannot be
	// written fails now, not after the measurements.
	var outs []*benchkit.Output
	open := func(path string) *benchkit.Output {
		if path == "" {
			return nil
		}
		o, err := benchkit.CreateOutput(path)
		if err != nil {
			// Name path, not the temporary file created next to it.
			if pe := (*os.PathError)(nil); errors.As(err, &pe) {
				err = fmt.Errorf("%s: %v", path, pe.Err)
			}
			fmt.Fprintf(stderr, "cuckoo bench: %v\n", err)
			return nil
		}
		outs = append(outs, o)
		return o
	}
	svgOut, jsonFile := open(*svg), open(*jsonOut)
	if *svg != "" && svgOut == nil || *jsonOut != "" && jsonFile == nil {
		for _, o := range outs {
			o.Abort()
		}
		return exitError
	}

	rep, err := benchkit.Run(cfg, benchImpls(m, b, kinds))
	if err == nil {
		err = rep.WriteTable(stdout)
	}
	if err == nil && svgOut != nil {
		err, svgOut = svgOut.Commit(rep.WriteSVG), nil
	}
	if err == nil && jsonFile != nil {
		err, jsonFile = jsonFile.Commit(rep.WriteJSON), nil
	}
	for _, o := range []*benchkit.Output{svgOut, jsonFile} {
		if o != nil {
			o.Abort()
		}
	}
	if err != nil {
		return fail(stderr, "bench", err)
	}
	return exitOK
}
