package cuckoo

import "fmt"

// Invariant checks of race builds (where the stress tests run; callers test
// the constant raceEnabled). A failed check, a bug in this package, panics.

// checkRelocation checks a step that turned src word os into ns and dst od
// into nd, moving fp: no word is a K-CAS reference, both counters rose by one
// mod 2^c (twophase.go's wrap bound), src lost a copy of fp, dst gained one.
func (l *layout) checkRelocation(os, ns, od, nd, fp uint64) {
	if (os|ns|od|nd)&tagMask != 0 {
		panic(fmt.Sprintf("cuckoo: invariant broken: relocation with a K-CAS reference among its words %#x, %#x, %#x, %#x", os, ns, od, nd))
	}
	for _, p := range [2][2]uint64{{os, ns}, {od, nd}} {
		if want := (l.counter(p[0]) + 1) & l.ctrMask; l.counter(p[1]) != want {
			panic(fmt.Sprintf("cuckoo: invariant broken: relocation took a migration counter from %d to %d; want %d", l.counter(p[0]), l.counter(p[1]), want))
		}
	}
	if l.matches(ns, fp) != l.matches(os, fp)-1 || l.matches(nd, fp) != l.matches(od, fp)+1 ||
		l.occupied(ns) != l.occupied(os)-1 || l.occupied(nd) != l.occupied(od)+1 {
		panic(fmt.Sprintf("cuckoo: invariant broken: relocation of fp %#x turned src %#x into %#x and dst %#x into %#x", fp, os, ns, od, nd))
	}
}
