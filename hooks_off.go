//go:build !cuckoohooks

package cuckoo

// testHooks compiles the scheduling hooks (hooks.go) into race builds only.
const testHooks = raceEnabled
