//go:build gc && !purego

package cuckoo

const prefetchAsm = true // prefetchPairs is prefetch_amd64.s
