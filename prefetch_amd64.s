//go:build amd64 && gc && !purego

#include "textflag.h"

// The Go assembler has no PREFETCHW mnemonic, so the instruction is given
// as bytes: 0F 0D /1 with ModRM 0C and SIB D0 is PREFETCHW (AX)(DX*8).
// TestPrefetchEncoding checks the assembled function.

// func prefetchPairs(base *atomic.Uint64, b1, b2 *uint64, n int, shift uint64)
TEXT ·prefetchPairs(SB), NOSPLIT, $0-40
	MOVQ base+0(FP), AX
	MOVQ b1+8(FP), BX
	MOVQ b2+16(FP), SI
	MOVQ n+24(FP), DI
	MOVQ shift+32(FP), CX
	TESTQ DI, DI
	JEQ done
loop:
	MOVQ (BX), DX
	SHRQ CX, DX
	BYTE $0x0F; BYTE $0x0D; BYTE $0x0C; BYTE $0xD0 // PREFETCHW (AX)(DX*8)
	MOVQ (SI), DX
	SHRQ CX, DX
	BYTE $0x0F; BYTE $0x0D; BYTE $0x0C; BYTE $0xD0 // PREFETCHW (AX)(DX*8)
	ADDQ $8, BX
	ADDQ $8, SI
	DECQ DI
	JNE loop
done:
	RET

// func prefetchReadPairs(base *atomic.Uint64, b1, b2 *uint64, n int, shift uint64)
TEXT ·prefetchReadPairs(SB), NOSPLIT, $0-40
	MOVQ base+0(FP), AX
	MOVQ b1+8(FP), BX
	MOVQ b2+16(FP), SI
	MOVQ n+24(FP), DI
	MOVQ shift+32(FP), CX
	TESTQ DI, DI
	JEQ rdone
rloop:
	MOVQ (BX), DX
	SHRQ CX, DX
	PREFETCHT0 (AX)(DX*8)
	MOVQ (SI), DX
	SHRQ CX, DX
	PREFETCHT0 (AX)(DX*8)
	ADDQ $8, BX
	ADDQ $8, SI
	DECQ DI
	JNE rloop
rdone:
	RET
