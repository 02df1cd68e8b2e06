//go:build cuckoohooks

package cuckoo

// hooksTag compiles the scheduling hooks (hooks.go) into a build without
// the race detector: go test -tags cuckoohooks.
const hooksTag = true
