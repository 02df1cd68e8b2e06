// Command loadgen drives a cacheguard service, started in this process on
// 127.0.0.1, with a mix of GETs for present and absent keys and concurrent
// writes, and reports requests/s, latency, database queries issued and
// avoided, false positives and false negatives (checked against the database).
//
//	go run ./cmd/loadgen -duration 15s                   # SQLite, filter on
//	go run ./cmd/loadgen -duration 15s -filter=false     # baseline
//	go run ./cmd/loadgen -dsn postgres://... -duration 15s
//	go run ./cmd/loadgen -matrix -dsn postgres://... -rtt 1ms   # the README's table
//
// It empties the guarded table before the run: the default table, which
// cacheguard creates and marks as its own (cacheguard.items, or
// cacheguard_items in a temporary SQLite file); the reset refuses any table
// cacheguard did not create. The run is bounded by -duration and
// -max-requests.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed25b00da8/cuckoo/examples/cacheguard/guard"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

type worker struct {
	lat       []time.Duration // GET latencies
	rejected  []string        // absent keys the filter rejected
	gets      int
	present   int // GETs of present keys
	fn        int // 404 for a key known present
	wrongHits int // 200 for a key known absent
	writes    int
	errs      int
	firstErr  error
}

// params are one load run's settings.
type params struct {
	dsn              string // "" for SQLite
	rtt              time.Duration
	filter           bool
	rows, maxReq     int
	readers, writers int
	duration         time.Duration
	absent, zipfS    float64
	bits             int
}

// result is one load run's outcome: one row of the table.
type result struct {
	backend, filter           string
	rtt                       time.Duration
	getsPerS, writesPerS      float64
	p50, p99                  time.Duration
	dbGets, avoided, fp       int64
	absentGets                int
	expectedFPR               float64
	fn, wrong, errs, rejected int
	firstErr                  error
}

func (r result) database() string {
	if r.rtt > 0 {
		return fmt.Sprintf("%s, +%v RTT", r.backend, r.rtt)
	}
	return r.backend
}

const tableHeader = `| database | filter | GET/s | p50 | p99 | DB queries for GETs | queries avoided | false positives (rate; expected) | false negatives | writes/s |
| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |`

func (r result) row() string {
	fp := "–"
	if r.filter != "off" {
		fp = fmt.Sprintf("%d (%.3f%%; %.3f%%)", r.fp, 100*float64(r.fp)/float64(max(r.absentGets, 1)), 100*r.expectedFPR)
	}
	return fmt.Sprintf("| %s | %s | %.0f | %v | %v | %d | %d | %s | %d | %.0f |", r.database(), r.filter, r.getsPerS,
		r.p50.Round(10*time.Microsecond), r.p99.Round(10*time.Microsecond), r.dbGets, r.avoided, fp, r.fn, r.writesPerS)
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dsn := fs.String("dsn", "", "PostgreSQL DSN (its table cacheguard.items is emptied); empty: SQLite in a temp dir")
	matrix := fs.Bool("matrix", false, "run every configuration (SQLite, and with -dsn PostgreSQL, and with -rtt PostgreSQL behind the delay) with and without the filter, and print the README's table")
	rtt := fs.Duration("rtt", 0, "PostgreSQL through a proxy on 127.0.0.1 that adds this round-trip time (with -matrix: an extra pair of runs)")
	useFilter := fs.Bool("filter", true, "serve with the filter (false: every GET queries the database)")
	rows := fs.Int("rows", 100_000, "present rows seeded before the run")
	duration := fs.Duration("duration", 15*time.Second, "run length (at most 2m)")
	maxReq := fs.Int("max-requests", 5_000_000, "stop after this many GETs")
	readers := fs.Int("readers", 16, "concurrent GET clients")
	writers := fs.Int("writers", 2, "concurrent writers (PUT new key, GET it, DELETE it)")
	absent := fs.Float64("absent", 0.5, "fraction of GETs for absent keys")
	zipfS := fs.Float64("zipf", 1.1, "Zipf exponent s (> 1) of the present keys' popularity")
	bits := fs.Int("fpbits", 12, "fingerprint bits (8, 12 or 15)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case *rows < 2 || *rows > 50_000_000:
		return fmt.Errorf("-rows %d: want 2 to 50M", *rows)
	case *duration <= 0 || *duration > 2*time.Minute:
		return fmt.Errorf("-duration %v: want (0, 2m]", *duration)
	case *readers < 1 || *readers > 1024 || *writers < 0 || *writers > 64:
		return errors.New("-readers must be 1..1024 and -writers 0..64")
	case *absent < 0 || *absent > 1:
		return fmt.Errorf("-absent %v: want 0..1", *absent)
	case *zipfS <= 1:
		return fmt.Errorf("-zipf %v: want > 1", *zipfS)
	case *maxReq < 1:
		return fmt.Errorf("-max-requests %d: want >= 1", *maxReq)
	}
	p := params{dsn: *dsn, rtt: *rtt, filter: *useFilter, rows: *rows, maxReq: *maxReq, readers: *readers, writers: *writers,
		duration: *duration, absent: *absent, zipfS: *zipfS, bits: *bits}
	logger := log.New(stderr, "loadgen: ", log.LstdFlags)
	if !*matrix {
		r, err := once(p, stdout, logger)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, tableHeader)
		fmt.Fprintln(stdout, r.row())
		return check(r, stderr)
	}
	if *rtt > 0 && *dsn == "" {
		return errors.New("-rtt needs -dsn")
	}
	var configs []params
	add := func(dsn string, rtt time.Duration) {
		for _, f := range []bool{true, false} {
			c := p
			c.dsn, c.rtt, c.filter = dsn, rtt, f
			configs = append(configs, c)
		}
	}
	add("", 0)
	if *dsn != "" {
		add(*dsn, 0)
		if *rtt > 0 {
			add(*dsn, *rtt)
		}
	}
	load0 := loadAvg()
	start := time.Now()
	var results []result
	for _, c := range configs {
		r, err := once(c, stdout, logger)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	fmt.Fprintf(stdout, "\nMachine: %s, %d vCPUs (GOMAXPROCS %d), %s; load average %s at the start, %s at the end; %v in all.\n",
		cpuModel(), runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), load0, loadAvg(), time.Since(start).Round(time.Second))
	fmt.Fprintf(stdout, "Load: %d rows, %d readers (%.0f%% absent keys, present ones Zipf s=%.2f), %d writers, %v per run.\n\n",
		p.rows, p.readers, 100*p.absent, p.zipfS, p.writers, p.duration)
	fmt.Fprintln(stdout, tableHeader)
	for _, r := range results {
		fmt.Fprintln(stdout, r.row())
	}
	for _, r := range results {
		if err := check(r, stderr); err != nil {
			return err
		}
	}
	return nil
}

func check(r result, stderr io.Writer) error {
	if r.firstErr != nil {
		fmt.Fprintln(stderr, "first error:", r.firstErr)
	}
	if r.fn > 0 || r.wrong > 0 {
		return fmt.Errorf("%s: %d false negatives, %d wrong hits", r.database(), r.fn, r.wrong)
	}
	return nil
}

// cpuModel is /proc/cpuinfo's model name (what lscpu shows), or GOARCH.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

// loadAvg is /proc/loadavg's 1-minute figure.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}

// once runs one configuration and prints its summary.
func once(p params, stdout io.Writer, logger *log.Logger) (result, error) {
	ctx := context.Background()
	var res result
	dsn, rows, readers, writers, absent, zipfS := p.dsn, &p.rows, &p.readers, &p.writers, &p.absent, &p.zipfS
	duration, maxReq, bits, useFilter := &p.duration, &p.maxReq, &p.bits, &p.filter

	var store guard.Store
	if dsn != "" {
		if p.rtt > 0 {
			proxy, via, err := startDelayProxy(dsn, p.rtt)
			if err != nil {
				return res, err
			}
			defer proxy.Close()
			dsn = via
		}
		pg, err := guard.OpenPostgres(ctx, dsn, guard.PGOptions{})
		if err != nil {
			return res, err
		}
		store = pg
	} else {
		dir, err := os.MkdirTemp("", "loadgen")
		if err != nil {
			return res, err
		}
		defer os.RemoveAll(dir)
		sl, err := guard.OpenSQLite(ctx, filepath.Join(dir, "load.db"), guard.SQLiteOptions{})
		if err != nil {
			return res, err
		}
		store = sl
	}
	defer store.Close()
	// Reset refuses a table cacheguard did not create (ErrNotOwned).
	if err := store.Reset(ctx); err != nil {
		return res, err
	}
	if err := store.Seed(ctx, "p", *rows); err != nil {
		return res, err
	}
	svc, err := guard.New(ctx, guard.Config{Store: store, NoFilter: !*useFilter, FingerprintBits: *bits, Log: logger})
	if err != nil {
		return res, err
	}
	defer svc.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return res, err
	}
	srv := &http.Server{Handler: svc.Handler()}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String() + "/items/"
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: *readers + *writers + 4}}

	get := func(key string) (int, string, error) {
		resp, err := client.Get(base + key)
		if err != nil {
			return 0, "", err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get(guard.SourceHeader), nil
	}
	send := func(method, key string) (int, error) {
		req, _ := http.NewRequest(method, base+key, nil)
		if method == "PUT" {
			req, _ = http.NewRequest(method, base+key, strings.NewReader("value"))
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	fail := func(w *worker, err error) {
		w.errs++
		if w.firstErr == nil {
			w.firstErr = err
		}
	}

	before := svc.Stats()
	deadline := time.Now().Add(*duration)
	var budget atomic.Int64
	budget.Store(int64(*maxReq))
	ws := make([]*worker, *readers+*writers)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range ws {
		w := &worker{}
		ws[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewSource(int64(i) + 1))
			if i >= *readers { // writer
				for n := 0; time.Now().Before(deadline); n++ {
					k := fmt.Sprintf("w%d-%d", i, n)
					if code, err := send("PUT", k); err != nil || code != 201 {
						fail(w, fmt.Errorf("PUT %s: %d %v", k, code, err))
						continue
					}
					code, _, err := get(k)
					if err != nil {
						fail(w, err)
					} else if code == 404 {
						w.fn++ // a key just written must be found
					}
					if code, err := send("DELETE", k); err != nil || code != 204 {
						fail(w, fmt.Errorf("DELETE %s: %d %v", k, code, err))
					}
					w.writes += 2
				}
				return
			}
			z := rand.NewZipf(r, *zipfS, 1, uint64(*rows-1))
			for time.Now().Before(deadline) && budget.Add(-1) >= 0 {
				var k string
				isPresent := r.Float64() >= *absent
				if isPresent {
					k = guard.SeedKey("p", int(z.Uint64()))
				} else {
					k = fmt.Sprintf("a%09d", r.Intn(1_000_000_000))
				}
				t0 := time.Now()
				code, src, err := get(k)
				w.lat = append(w.lat, time.Since(t0))
				w.gets++
				switch {
				case err != nil || (code != 200 && code != 404):
					fail(w, fmt.Errorf("GET %s: %d %v", k, code, err))
				case isPresent:
					w.present++
					if code != 200 {
						w.fn++
					}
				case code == 200:
					w.wrongHits++
				case src == "filter":
					w.rejected = append(w.rejected, k)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	after := svc.Stats()

	var lat []time.Duration
	var rejected []string
	var gets, present, fn, wrong, writes, errs int
	var firstErr error
	for _, w := range ws {
		lat = append(lat, w.lat...)
		rejected = append(rejected, w.rejected...)
		gets, present, fn, wrong, writes, errs = gets+w.gets, present+w.present, fn+w.fn, wrong+w.wrongHits, writes+w.writes, errs+w.errs
		if firstErr == nil {
			firstErr = w.firstErr
		}
	}
	slices.Sort(lat)
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))]
	}
	// False negatives, checked against the database: every key the filter
	// rejected must have no row (absent keys are never written).
	found, err := store.Existing(ctx, rejected)
	if err != nil {
		return res, fmt.Errorf("checking rejected keys against the database: %w", err)
	}
	fn += len(found)

	filterName := "off"
	if *useFilter {
		filterName = fmt.Sprintf("%d×%d bits", after.SlotsPerBucket, after.FingerprintBits)
	}
	dbGets := after.DBReads - before.DBReads
	fmt.Fprintf(stdout, "backend %s, filter %s, %d rows, %d readers + %d writers, %.0f%% absent, zipf s=%.2f, %v\n",
		store.Backend(), filterName, *rows, *readers, *writers, 100**absent, *zipfS, elapsed.Round(time.Millisecond))
	fmt.Fprintf(stdout, "GETs %d (%.0f/s), p50 %v, p99 %v; writes %d (%.0f/s)\n", gets, float64(gets)/elapsed.Seconds(),
		pct(0.50).Round(time.Microsecond), pct(0.99).Round(time.Microsecond), writes, float64(writes)/elapsed.Seconds())
	fmt.Fprintf(stdout, "database queries for GETs %d, avoided %d (%.1f%% of GETs), false positives %d (%.4f%% of absent GETs; expected rate %.4f%%)\n",
		dbGets, after.Rejected-before.Rejected, 100*float64(after.Rejected-before.Rejected)/float64(max(after.Gets-before.Gets, 1)),
		after.FalsePositives-before.FalsePositives, 100*float64(after.FalsePositives-before.FalsePositives)/float64(max(gets-present, 1)), 100*after.ExpectedFPR)
	fmt.Fprintf(stdout, "false negatives %d (%d rejections checked against the database, %d present-key GETs, writers' read-back GETs); wrong hits %d; errors %d\n",
		fn, len(rejected), present, wrong, errs)
	res = result{backend: store.Backend(), filter: filterName, rtt: p.rtt,
		getsPerS: float64(gets) / elapsed.Seconds(), writesPerS: float64(writes) / elapsed.Seconds(),
		p50: pct(0.50), p99: pct(0.99), dbGets: dbGets, avoided: after.Rejected - before.Rejected,
		fp: after.FalsePositives - before.FalsePositives, absentGets: gets - present, expectedFPR: after.ExpectedFPR,
		fn: fn, wrong: wrong, errs: errs, rejected: len(rejected), firstErr: firstErr}
	return res, nil
}
