//go:build amd64 && gc && !race

package cuckoo

import (
	"sync/atomic"
	"unsafe"
)

// setField writes a descriptor field (see "Field writes" in kcas.go): a
// plain store, which x86-TSO orders after the sequence bump before it and
// before the CAS that publishes the descriptor after it.
func setField(p *atomic.Uint64, v uint64) { *(*uint64)(unsafe.Pointer(p)) = v }
