//go:build cuckoohooks

package cuckoo

// testHooks compiles the scheduling hooks (hooks.go) into every build.
const testHooks = true
