// Package compare runs the same workloads over several approximate-membership
// structures in one process and reports throughput, memory and false-positive
// rates side by side.
//
// The runner, the keys, the workloads and the reports are the main module's
// internal/benchkit, shared with the cuckoo command's bench subcommand, and
// this filter, the locked map and the memory probe are adapted by its
// internal/benchimpl: a cell measured here is measured exactly as `cuckoo
// bench` measures it. This package adds the competitors (seiflotfy.go,
// bloom.go, xorfilter.go), equal-load sizing (equalload.go), the summary
// table (summary.go) and the command line.
package compare

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/seed25b00da8/cuckoo/internal/benchkit"
)

// The runner's types, under the names this package has always used.
type (
	// Filter is the interface every compared structure is adapted to.
	Filter = benchkit.Filter
	// Impl describes one compared implementation.
	Impl = benchkit.Impl
	// Keys holds keys back to back, for static structures.
	Keys = benchkit.Keys
	// Workload names one measured operation mix.
	Workload = benchkit.Workload
	// Env is one size.
	Env = benchkit.Env
	// Result is what one timed run did.
	Result = benchkit.Result
	// Size is a key count with its name.
	Size = benchkit.Size
	// Config selects what Run measures.
	Config = benchkit.Config
	// Report is the outcome of Run.
	Report = benchkit.Report
	// Cell is one measurement.
	Cell = benchkit.Cell
)

// The workloads, in run order.
const (
	Fill      = benchkit.Fill
	LookupPos = benchkit.LookupPos
	LookupNeg = benchkit.LookupNeg
	Mixed     = benchkit.Mixed
)

// Workloads lists every workload in run order.
var Workloads = benchkit.Workloads

// ErrUnsupported is returned by adapters for operations their structure does
// not have (Insert on a static filter).
var ErrUnsupported = benchkit.ErrUnsupported

// KeySize is the length of every key.
const KeySize = benchkit.KeySize

// NewEnv returns the environment of size n.
func NewEnv(n int) *Env { return benchkit.NewEnv(n) }

// MixedFill returns the number of keys held during the mixed workload.
func MixedFill(n int) int { return benchkit.MixedFill(n) }

// Supports reports whether impl runs workload w with g goroutines, and if
// not, why.
func Supports(impl Impl, w Workload, g int) (bool, string) { return benchkit.Supports(impl, w, g) }

// Select returns the impls whose name contains one of the substrings in
// filter (all of them if filter is empty).
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

// Run measures every selected impl (see benchkit.Run).
func Run(cfg Config, impls []Impl) (*Report, error) {
	if cfg.Title == "" {
		cfg.Title = "filter comparison"
	}
	return benchkit.Run(cfg, impls)
}

// Main parses args as command-line flags, runs the comparison over impls and
// prints the text report to stdout (progress to stderr).
func Main(args []string, impls []Impl, header ...string) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	sizes := fs.String("sizes", "1M", "comma-separated key counts: "+benchkit.SizeHelp)
	gs := fs.String("goroutines", "1,2,64", "comma-separated goroutine counts (serial impls run only with 1)")
	names := make([]string, len(impls))
	for i, im := range impls {
		names[i] = im.Name
	}
	sel := fs.String("impls", "", "comma-separated substrings of impl names to run (default all): "+strings.Join(names, ", "))
	wl := fs.String("workloads", benchkit.JoinWorkloads(Workloads), "comma-separated workloads")
	dur := fs.Duration("duration", 500*time.Millisecond, "time per cell (a fill runs at least once)")
	reps := fs.Int("reps", 5, "repetitions per timed cell (each duration/reps long); the rate is their median")
	ops := fs.Int64("ops", 0, "if positive, run each lookup and mixed repetition for exactly `N` operations and each fill cell as -reps whole fills, instead of for -duration (reproducible counts)")
	fillLimit := fs.Duration("fill-limit", 30*time.Second, "cut off a fill that takes longer (0: never)")
	ref := fs.String("ref", "", "reference impl for the ratio columns (default the first selected)")
	matrix := fs.Bool("matrix", false, "also print the ratio of every impl to every peer")
	jsonOut := fs.String("json", "", "also write the report as JSON to this file")
	svgOut := fs.String("svg", "", "also write a chart to this file (SVG)")
	quiet := fs.Bool("q", false, "no progress on stderr")
	equal := fs.Bool("equal-load", false, "equal table load: each size is a power-of-two class S of slots; every structure holds the same 0.95·0.95·S keys (1M: 946,339), every cuckoo table has S slots (whole buckets), mixed keeps every key in")
	summary := fs.Bool("summary", false, "print the summary table (markdown) of this filter's New(n) layout, LockFree and Locked, against xor8, binary fuse8, seiflotfy (unguarded, Mutex, RWMutex) and bloom under RWMutex at equal load; defaults to -sizes 1M,32M -goroutines 1,2 -ops 4000000 -fill-limit 10m (-sizes 1M leaves out the long 32M part)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *summary {
		if set["impls"] || set["ref"] || set["matrix"] || set["svg"] {
			return errors.New("compare: -summary runs its own impls and table: no -impls, -ref, -matrix or -svg")
		}
		*equal = true
		impls = SummaryImpls()
		for name, v := range map[string]string{"sizes": "1M,32M", "goroutines": "1,2", "ops": "4000000", "fill-limit": "10m"} {
			if !set[name] {
				fs.Set(name, v)
			}
		}
	}
	cfg := Config{Title: "filter comparison", Duration: *dur, Reps: *reps, Ops: *ops, FillLimit: *fillLimit, Ref: *ref, Header: header,
		Command: strings.Join(append([]string{filepath.Base(os.Args[0])}, args...), " ")}
	var err error
	if cfg.Sizes, err = benchkit.ParseSizes(*sizes, 0); err != nil {
		return fmt.Errorf("compare: -sizes: %v", err)
	}
	var classes []summaryClass
	if *equal {
		for i, s := range cfg.Sizes {
			if cfg.Sizes[i], err = EqualLoadSize(s.Name, s.N); err != nil {
				return err
			}
			c, err := newSummaryClass(cfg.Sizes[i], s.N)
			if err != nil {
				return err
			}
			classes = append(classes, c)
			if *summary {
				continue // WriteSummary describes the classes
			}
			cfg.Header = append(cfg.Header, fmt.Sprintf("equal load %s (instead of the fill and mixed lines below): the same %d keys in every structure, inserted by the fill into an empty one, all in during mixed; "+
				"every cuckoo table has the fewest whole buckets of at least %d slots (seiflotfy's %d, New(%d)'s %d)", s.Name, cfg.Sizes[i].N, s.N, s.N, c.ask, c.slots))
		}
		cfg.MixedFill = func(n int) int { return n }
	}
	if cfg.Goroutines, err = benchkit.ParseGoroutines(*gs); err != nil {
		return fmt.Errorf("compare: -goroutines: %v", err)
	}
	if cfg.Workloads, err = benchkit.ParseWorkloads(*wl); err != nil {
		return fmt.Errorf("compare: -workloads: %v", err)
	}
	if *dur <= 0 || *reps < 1 || *ops < 0 {
		return errors.New("compare: -duration must be positive, -reps at least 1, -ops not negative")
	}
	if *sel != "" {
		impls = Select(impls, strings.Split(*sel, ","))
	}
	if *equal && !*summary {
		impls = EqualLoad(impls)
	}
	if len(impls) == 0 {
		return errors.New("compare: no impl selected")
	}
	if cfg.Ref != "" && len(Select(impls, []string{cfg.Ref})) == 0 {
		return fmt.Errorf("compare: -ref %q is not among the selected impls", cfg.Ref)
	}
	if !*quiet {
		cfg.Progress = os.Stderr
	}
	// The output files are checked before the run, not after it.
	var outs []*benchkit.Output
	defer func() {
		for _, o := range outs {
			o.Abort()
		}
	}()
	writers := []func(*Report) error{}
	for _, o := range []struct {
		path  string
		write func(*Report) func(w io.Writer) error
	}{
		{*jsonOut, func(r *Report) func(io.Writer) error { return r.WriteJSON }},
		{*svgOut, func(r *Report) func(io.Writer) error { return r.WriteSVG }},
	} {
		if o.path == "" {
			continue
		}
		out, err := benchkit.CreateOutput(o.path)
		if err != nil {
			return fmt.Errorf("compare: %v", err)
		}
		outs = append(outs, out)
		write := o.write
		writers = append(writers, func(r *Report) error { return out.Commit(write(r)) })
	}
	rep, err := Run(cfg, impls)
	if err != nil {
		return err
	}
	if *summary {
		err = WriteSummary(os.Stdout, rep, classes)
	} else {
		err = rep.WriteText(os.Stdout, *matrix)
	}
	if err != nil {
		return err
	}
	for _, w := range writers {
		if err := w(rep); err != nil {
			return err
		}
	}
	return nil
}
