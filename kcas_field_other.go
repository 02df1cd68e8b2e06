//go:build !amd64 || !gc || race

package cuckoo

import "sync/atomic"

// setField writes a descriptor field (see "Field writes" in kcas.go): an
// atomic store, sequentially consistent: on processors whose plain stores
// may become visible out of order, with compilers other than gc, and in
// race builds, where the race detector needs the accesses atomic.
func setField(p *atomic.Uint64, v uint64) { p.Store(v) }
