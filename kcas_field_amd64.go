//go:build amd64 && gc && !race

package cuckoo

import (
	"sync/atomic"
	"unsafe"
)

// setField writes a descriptor field with a plain store (kcas.go, "Field
// writes": x86-TSO keeps it between the sequence bump and the publishing CAS).
func setField(p *atomic.Uint64, v uint64) { *(*uint64)(unsafe.Pointer(p)) = v }
