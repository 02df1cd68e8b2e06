// Command triebench runs the workload of a paper on cache penetration
// (fixed-length 5-character strings, 100K to 8M) over the paper's
// erasable bit-labelled trie, this cuckoo filter at f=12 and f=8, and a Go
// map[string]struct{}, and prints build time, lookup time (present,
// absent), heap growth and false positives as a Markdown table.
//
//	go run ./cmd/triebench -sizes 100K,200K,400K,600K,800K,1M,2M,4M,8M
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/seed25b00da8/cuckoo/bench/compare"
)

func main() {
	sizes := flag.String("sizes", "100K,200K,400K,600K,800K,1M,2M,4M,8M", "comma-separated key counts (K = 1000, M = 1000000)")
	flag.Parse()
	var ns []int
	for _, s := range strings.Split(*sizes, ",") {
		mult := 1
		switch {
		case strings.HasSuffix(s, "K"):
			mult, s = 1000, strings.TrimSuffix(s, "K")
		case strings.HasSuffix(s, "M"):
			mult, s = 1_000_000, strings.TrimSuffix(s, "M")
		}
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			fmt.Fprintf(os.Stderr, "triebench: bad size %q\n", s)
			os.Exit(2)
		}
		ns = append(ns, v*mult)
	}
	if _, err := compare.RunTrieWorkload(os.Stdout, ns); err != nil {
		fmt.Fprintln(os.Stderr, "triebench:", err)
		os.Exit(1)
	}
}
