// Command casprobe measures random compare-and-swaps into a shared array,
// the ceiling of a concurrent fill's writes, at each array size and
// goroutine count it is given: each goroutine loads a random word and
// CASes it to one more, ops times in all, split evenly.
//
//	go run ./cmd/casprobe -bytes 1140326,2207248,8388608 -goroutines 1,2 -runs 3
//
// On a machine whose cores share a cache, random writes into an array that
// fits in it may not scale from one goroutine to two, whatever does the
// writing: on the 2-vCPU Intel Xeon VM of BENCHMARKS.md, arrays of 1 to 4
// MB took 0.98-1.05x as many CASes per second from two goroutines as from
// one, arrays of 8 MB and more 1.5-2x. Read a filter's fill at two
// goroutines against this probe at its table's size, run in the same
// session.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	sizes := flag.String("bytes", "1153434,2306868", "comma-separated array sizes in bytes (rounded down to whole 8-byte words)")
	gs := flag.String("goroutines", "1,2", "comma-separated goroutine counts")
	ops := flag.Int("ops", 1<<25, "CASes per cell, split among the goroutines")
	runs := flag.Int("runs", 3, "runs per cell; the median is printed with the runs")
	flag.Parse()
	if err := run(os.Stdout, *sizes, *gs, *ops, *runs); err != nil {
		log.Fatal(err)
	}
}

func ints(list, what string) ([]int, error) {
	var out []int
	for _, s := range strings.Split(list, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("%s: %q is not a positive integer", what, s)
		}
		out = append(out, v)
	}
	return out, nil
}

func run(w io.Writer, sizeList, gList string, ops, runs int) error {
	sizes, err := ints(sizeList, "-bytes")
	if err != nil {
		return err
	}
	gs, err := ints(gList, "-goroutines")
	if err != nil {
		return err
	}
	if ops < 1 || runs < 1 {
		return fmt.Errorf("-ops and -runs must be positive")
	}
	for _, size := range sizes {
		words := size / 8
		if words < 1 {
			return fmt.Errorf("-bytes: %d is less than one word", size)
		}
		t := make([]atomic.Uint64, words)
		for i := range t {
			t[i].Store(uint64(i)) // fault every page in before timing
		}
		for _, g := range gs {
			rates := make([]float64, runs)
			for r := range rates {
				rates[r] = float64(ops) / probe(t, g, ops).Seconds() / 1e6
			}
			sorted := append([]float64(nil), rates...)
			sort.Float64s(sorted)
			fmt.Fprintf(w, "bytes=%d g=%d: median %.1f M CAS/s, runs", words*8, g, sorted[len(sorted)/2])
			for _, x := range rates {
				fmt.Fprintf(w, " %.1f", x)
			}
			fmt.Fprintln(w)
		}
	}
	return nil
}

// probe runs ops CASes on random words of t from g goroutines and returns
// the time they took.
func probe(t []atomic.Uint64, g, ops int) time.Duration {
	n := uint64(len(t))
	var wg sync.WaitGroup
	start := time.Now()
	for k := range g {
		wg.Add(1)
		go func(x uint64) {
			defer wg.Done()
			for range ops / g {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				j := (x >> 11) % n
				v := t[j].Load()
				t[j].CompareAndSwap(v, v+1)
			}
		}(uint64(k+1) * 0x9e3779b97f4a7c15)
	}
	wg.Wait()
	return time.Since(start)
}
