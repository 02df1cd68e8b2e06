//go:build !amd64 || !gc || purego

package cuckoo

const prefetchAsm = false
