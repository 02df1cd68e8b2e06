package cuckoo

import "fmt"

// Invariant checks that run only in race builds (go test -race), where the
// stress tests run: each call site is guarded by the constant raceEnabled,
// so the compiler removes it, and its cost, from every other build. A
// failed check is a bug in this package, never bad input, and panics.

// checkRelocation checks one relocation step that turned src word os into
// ns and dst word od into nd, moving fp: both migration counters went up by
// exactly one modulo the counter width (a counter never decreases or jumps,
// which the wrap bound of twophase.go relies on; counters wrap, so "one
// more" is taken modulo 2^c), src lost one copy of fp and dst gained one,
// and no word is a K-CAS reference.
func (l *layout) checkRelocation(os, ns, od, nd, fp uint64) {
	for _, w := range [4]uint64{os, ns, od, nd} {
		if w&tagMask != 0 {
			panic(fmt.Sprintf("cuckoo: invariant broken: relocation with a K-CAS reference %#x as a bucket word", w))
		}
	}
	for _, p := range [2][2]uint64{{os, ns}, {od, nd}} {
		if want := (l.counter(p[0]) + 1) & l.ctrMask; l.counter(p[1]) != want {
			panic(fmt.Sprintf("cuckoo: invariant broken: relocation took a migration counter from %d to %d; want %d",
				l.counter(p[0]), l.counter(p[1]), want))
		}
	}
	if l.matches(ns, fp) != l.matches(os, fp)-1 || l.matches(nd, fp) != l.matches(od, fp)+1 ||
		l.occupied(ns) != l.occupied(os)-1 || l.occupied(nd) != l.occupied(od)+1 {
		panic(fmt.Sprintf("cuckoo: invariant broken: relocation of fp %#x turned src %#x into %#x and dst %#x into %#x",
			fp, os, ns, od, nd))
	}
}

// checkStripeOrder checks that a goroutine takes stripe lo before stripe hi
// only if lo <= hi: stripes are always locked in ascending order, which is
// what rules out deadlock between lockBuckets callers.
func checkStripeOrder(lo, hi uint32) {
	if lo > hi {
		panic(fmt.Sprintf("cuckoo: invariant broken: stripes locked in descending order (%d, then %d)", lo, hi))
	}
}
