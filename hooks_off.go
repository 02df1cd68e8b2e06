//go:build !cuckoohooks

package cuckoo

// testHooks compiles the scheduling hooks (hooks.go) into race builds only:
// a constant false elsewhere, so other builds hold neither calls nor hooks.
const testHooks = raceEnabled
