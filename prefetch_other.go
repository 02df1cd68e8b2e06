//go:build !amd64 || !gc || purego

package cuckoo

import "sync/atomic"

const prefetchW = false

func prefetchPairs(base *atomic.Uint64, b1, b2 *uint64, n int, shift uint64) {}

func prefetchReadPairs(base *atomic.Uint64, b1, b2 *uint64, n int, shift uint64) {}
