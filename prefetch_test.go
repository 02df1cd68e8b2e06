package cuckoo

import (
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// TestPrefetchEncoding checks the machine code of prefetchPairs, whose
// PREFETCHW is written as bytes (the assembler has no mnemonic for it), and
// of prefetchReadPairs, the same loop with PREFETCHT0.
func TestPrefetchEncoding(t *testing.T) {
	if !prefetchAsm {
		t.Skip("no assembly on this build: prefetchPairs is an empty Go function")
	}
	checkAssembly(t, map[string][]byte{
		"prefetchPairs":     prefetchLoop([]byte{0x0f, 0x0d, 0x0c, 0xd0}), // PREFETCHW (AX)(DX*8)
		"prefetchReadPairs": prefetchLoop([]byte{0x0f, 0x18, 0x0c, 0xd0}), // PREFETCHT0 (AX)(DX*8)
	})
}

// prefetchLoop is the machine code of prefetch_amd64.s's loops, with
// prefetch as the instruction for each word.
func prefetchLoop(prefetch []byte) []byte {
	var code []byte
	for _, part := range [][]byte{
		{0x48, 0x8b, 0x44, 0x24, 0x08}, // MOVQ base+0(FP), AX
		{0x48, 0x8b, 0x5c, 0x24, 0x10}, // MOVQ b1+8(FP), BX
		{0x48, 0x8b, 0x74, 0x24, 0x18}, // MOVQ b2+16(FP), SI
		{0x48, 0x8b, 0x7c, 0x24, 0x20}, // MOVQ n+24(FP), DI
		{0x48, 0x8b, 0x4c, 0x24, 0x28}, // MOVQ shift+32(FP), CX
		{0x48, 0x85, 0xff},             // TESTQ DI, DI
		{0x74, 0x21},                   // JEQ done
		{0x48, 0x8b, 0x13},             // loop: MOVQ (BX), DX
		{0x48, 0xd3, 0xea},             // SHRQ CL, DX
		prefetch,
		{0x48, 0x8b, 0x16}, // MOVQ (SI), DX
		{0x48, 0xd3, 0xea}, // SHRQ CL, DX
		prefetch,
		{0x48, 0x83, 0xc3, 0x08}, // ADDQ $8, BX
		{0x48, 0x83, 0xc6, 0x08}, // ADDQ $8, SI
		{0x48, 0xff, 0xcf},       // DECQ DI
		{0x75, 0xdf},             // JNE loop
		{0xc3},                   // done: RET
	} {
		code = append(code, part...)
	}
	return code
}

// TestPrefetchChangesNothing prefetches every word of a table, for writing
// and for reading, as pairs of buckets in both layouts' numbering and for
// no bucket at all, and checks that the words are as they were.
func TestPrefetchChangesNothing(t *testing.T) {
	const n = 64
	words := make([]atomic.Uint64, n)
	val := func(i int) uint64 { return uint64(i)*0x9e3779b97f4a7c15 | 1 }
	for i := range words {
		words[i].Store(val(i))
	}
	for shift := range uint64(2) {
		for lo := 0; lo < n<<shift; lo += batchGroup {
			var b1, b2 [batchGroup]uint64
			for j := range b1 {
				b1[j] = uint64(lo + j)
				b2[j] = uint64(n<<shift - 1 - lo - j)
			}
			prefetchForWrite(words, &b1, &b2, batchGroup, shift)
			if prefetchW {
				prefetchPairs(&words[0], &b1[0], &b2[0], batchGroup, shift)
			}
			prefetchForWrite(words, &b1, &b2, 1, shift)
			prefetchForWrite(words, &b1, &b2, 0, shift)
			prefetchReadPairs(&words[0], &b1[0], &b2[0], batchGroup, shift)
			prefetchReadPairs(&words[0], &b1[0], &b2[0], 0, shift)
		}
	}
	for i := range words {
		if got := words[i].Load(); got != val(i) {
			t.Fatalf("word %d: got %#x after the prefetches; want %#x", i, got, val(i))
		}
	}
}

// TestPrefetchWMatchesCPUInfo checks the CPUID test behind prefetchW
// against the flags Linux reports ("3dnowprefetch" is the same bit).
func TestPrefetchWMatchesCPUInfo(t *testing.T) {
	if !prefetchAsm {
		if prefetchW {
			t.Fatal("prefetchW is true on a build without the assembly")
		}
		t.Skip("no assembly on this build")
	}
	info, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skipf("no /proc/cpuinfo to compare with: %v", err)
	}
	var flags []string
	for _, line := range strings.Split(string(info), "\n") {
		if name, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "flags" {
			flags = strings.Fields(value)
			break
		}
	}
	if flags == nil {
		t.Skip("/proc/cpuinfo lists no flags")
	}
	if listed := slices.Contains(flags, "3dnowprefetch"); listed != prefetchW {
		t.Fatalf("prefetchW = %v; /proc/cpuinfo lists 3dnowprefetch: %v", prefetchW, listed)
	}
}
