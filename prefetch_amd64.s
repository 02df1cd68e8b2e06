//go:build amd64 && gc && !purego

#include "textflag.h"

// The Go assembler has no PREFETCHW mnemonic, so the instruction is given
// as bytes: 0F 0D /1 with ModRM 0C and SIB D0 is PREFETCHW (AX)(DX*8).
// TestPrefetchEncoding checks the assembled functions.
#define PREFETCHW_AX_DX BYTE $0x0F; BYTE $0x0D; BYTE $0x0C; BYTE $0xD0
#define PREFETCHT0_AX_DX PREFETCHT0 (AX)(DX*8)

// PAIRS prefetches base[b1[i]>>shift] and base[b2[i]>>shift], i < n, by
// the instruction PREFETCH (either above); labels are the function's own.
#define PAIRS(PREFETCH) \
	MOVQ base+0(FP), AX \
	MOVQ b1+8(FP), BX \
	MOVQ b2+16(FP), SI \
	MOVQ n+24(FP), DI \
	MOVQ shift+32(FP), CX \
	TESTQ DI, DI \
	JEQ done \
loop: \
	MOVQ (BX), DX \
	SHRQ CX, DX \
	PREFETCH \
	MOVQ (SI), DX \
	SHRQ CX, DX \
	PREFETCH \
	ADDQ $8, BX \
	ADDQ $8, SI \
	DECQ DI \
	JNE loop \
done: \
	RET

// func prefetchPairs(base *atomic.Uint64, b1, b2 *uint64, n int, shift uint64)
TEXT ·prefetchPairs(SB), NOSPLIT, $0-40
	PAIRS(PREFETCHW_AX_DX)

// func prefetchReadPairs(base *atomic.Uint64, b1, b2 *uint64, n int, shift uint64)
TEXT ·prefetchReadPairs(SB), NOSPLIT, $0-40
	PAIRS(PREFETCHT0_AX_DX)
