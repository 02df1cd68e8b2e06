// Command compare runs the filter comparison: this cuckoo filter in its modes
// against seiflotfy/cuckoofilter, a Bloom filter, xor filters, a Go map and a
// memory probe, over the same keys and workloads. Run with -h for the flags.
//
//	go run ./cmd/compare -sizes 1M -json compare-1M.json
//	go run ./cmd/compare -summary      # the summary table at equal load, 1M and 32M keys (markdown)
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/seed25b00da8/cuckoo/bench/compare"
)

func main() {
	if err := compare.Main(os.Args[1:], compare.All(), compare.Header()...); err != nil {
		if err == flag.ErrHelp {
			return
		}
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
