//go:build amd64 && gc && !purego

#include "textflag.h"

// The Go assembler knows the RTM mnemonics; the encodings it emits are noted
// beside them (and checked by TestHTMEncoding). None of these functions has
// a frame, so an abort, which restores the stack pointer of the XBEGIN, lands
// back in xbegin's own (empty) frame.

// func xbegin() uint32
TEXT ·xbegin(SB), NOSPLIT, $0-4
	MOVL $0xffffffff, AX // txStarted: XBEGIN leaves EAX alone when it starts
	XBEGIN abort         // C7 F8 00000000: rel32 0, the abort handler is the next instruction
abort:
	// Reached twice: when the transaction starts (EAX = txStarted) and, with
	// memory and registers rolled back, when it aborts (EAX = abort status).
	MOVL AX, ret+0(FP)
	RET

// func xend()
TEXT ·xend(SB), NOSPLIT, $0-0
	XEND // 0F 01 D5
	RET

// func xabortLockHeld()
TEXT ·xabortLockHeld(SB), NOSPLIT, $0-0
	XABORT $0xff // C6 F8 FF: abort with code txLockHeld
	RET

// func xtest() bool
TEXT ·xtest(SB), NOSPLIT, $0-1
	XTEST // 0F 01 D6: ZF = 0 inside a transaction
	SETNE ret+0(FP)
	RET

// func cpuid(eax, ecx uint32) (a, b, c, d uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL eax+0(FP), AX
	MOVL ecx+4(FP), CX
	CPUID
	MOVL AX, a+8(FP)
	MOVL BX, b+12(FP)
	MOVL CX, c+16(FP)
	MOVL DX, d+20(FP)
	RET
