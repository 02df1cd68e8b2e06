//go:build !amd64 || !gc || race

package cuckoo

import "sync/atomic"

// setField writes a descriptor field atomically (kcas.go, "Field writes").
func setField(p *atomic.Uint64, v uint64) { p.Store(v) }
