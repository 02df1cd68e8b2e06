//go:build !cuckoohooks

package cuckoo

// hooksTag is false: the scheduling hooks (hooks.go) are in race builds only.
const hooksTag = false
