//go:build cuckoohooks

package cuckoo

// testHooks compiles the scheduling hooks (hooks.go) into every build
// tagged cuckoohooks (go test -tags cuckoohooks).
const testHooks = true
