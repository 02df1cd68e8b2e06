// Package benchkit is the benchmark runner shared by the cuckoo command's
// bench subcommand (cmd/cuckoo) and the comparison module (bench/compare):
// keys, workloads, timing, medians, load averages, size parsing and the
// text, JSON and SVG reports. Both tools describe their structures as Impl
// values and call Run, so a cell measured by one tool is measured the same
// way by the other: the same keys, the same operations in the same order,
// the same result fields.
//
// It imports only the standard library. The adapters of this repository's
// filter, the locked map and the memory probe live in internal/benchimpl;
// competitors live in the bench module.
package benchkit
