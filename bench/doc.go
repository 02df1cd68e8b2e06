// Package bench holds the competitor benchmarks of the cuckoo filter in their
// own module, so that users of the filter never download the competitors.
//
// The comparison itself is package compare; cmd/compare runs it and prints a
// table (go run ./cmd/compare -sizes 1M), and compare_test.go exposes the
// same cells as go test benchmarks named
// impl=NAME/workload=WORKLOAD/n=SIZE/g=GOROUTINES.
package bench
