package cuckoo

import (
	"bufio"
	"bytes"
	"debug/elf"
	"debug/gosym"
	"encoding/binary"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestRTMDefault checks the default elision setting and that a stripe set
// that does not elide never counts transactions. On processors without RTM
// (every machine these tests are run on so far) this is the only RTM
// behaviour there is.
func TestRTMDefault(t *testing.T) {
	if want := rtmSupported() && !raceEnabled; useRTM != want {
		t.Errorf("got useRTM=%v; want %v (rtmSupported=%v, raceEnabled=%v)", useRTM, want, rtmSupported(), raceEnabled)
	}
	if got := RTMActive(); got != useRTM {
		t.Errorf("got RTMActive()=%v; want useRTM=%v", got, useRTM)
	}
	if !htmAsm && rtmSupported() {
		t.Error("got rtmSupported()=true without the assembly; want false")
	}
	t.Logf("rtmSupported=%v raceEnabled=%v useRTM=%v", rtmSupported(), raceEnabled, useRTM)

	g, iters := runtime.GOMAXPROCS(0), scaled(20000, 10)
	s := testMutualExclusion(t, false, g, iters)
	st := s.stats()
	if st.Elided != useRTM {
		t.Errorf("got Elided=%v; want %v", st.Elided, useRTM)
	}
	if !st.Elided {
		if st != (LockStats{Waits: st.Waits}) {
			t.Errorf("got %+v without elision; want all zero but Waits", st)
		}
		return
	}
	if got, want := st.TxCommits+st.Fallbacks, uint64(g*iters); got != want {
		t.Errorf("got %d commits + fallbacks; want one per section, %d", got, want)
	}
}

// TestRTMForcedOff turns elision off and checks that sections take the MCS
// locks and count nothing.
func TestRTMForcedOff(t *testing.T) {
	withRTM(t, false)
	if RTMActive() {
		t.Error("got RTMActive()=true with useRTM=false; want false")
	}
	s := newStripedLocks(1 << 16)
	g := s.lockBuckets(1, 2)
	if g.tx {
		t.Errorf("got guard %+v; want no transaction", g)
	}
	for _, i := range []uint32{g.lo, g.hi} {
		if v := s.stripes[i].tail.Load(); v != mcsHeld {
			t.Errorf("stripe %d: got tail %#x; want %#x (held through MCS, no waiters)", i, v, uint32(mcsHeld))
		}
	}
	s.unlockBuckets(g)

	s = testMutualExclusion(t, false, 4, scaled(5000, 10))
	if st := s.stats(); st != (LockStats{Waits: st.Waits}) {
		t.Errorf("got %+v with useRTM=false; want all zero but Waits", st)
	}
}

// TestRTMForcedOn runs the mutual exclusion test with elision on. It needs a
// processor with RTM.
func TestRTMForcedOn(t *testing.T) {
	if !rtmSupported() {
		t.Skip("the processor lacks RTM or forces it to abort: XBEGIN would raise #UD, so elision cannot be forced on")
	}
	if raceEnabled {
		t.Skip("the race detector cannot see hardware transactions as synchronization")
	}
	withRTM(t, true)

	s := newStripedLocks(1 << 16)
	g := s.lockBuckets(1, 2)
	in := xtest()
	s.unlockBuckets(g)
	if in != g.tx {
		t.Errorf("got xtest()=%v in a section with guard tx=%v; want equal", in, g.tx)
	}
	if xtest() {
		t.Error("got xtest()=true after unlockBuckets; want false")
	}

	procs, iters := runtime.GOMAXPROCS(0), scaled(50000, 10)
	s = testMutualExclusion(t, false, procs, iters)
	st := s.stats()
	if !st.Elided {
		t.Errorf("got Elided=false with useRTM=true; want true")
	}
	if got, want := st.TxCommits+st.Fallbacks, uint64(procs*iters); got != want {
		t.Errorf("got %d commits + fallbacks; want one per section, %d", got, want)
	}
	if sum := st.TxAbortsLockHeld + st.TxAbortsConflict + st.TxAbortsCapacity + st.TxAbortsOther; sum != st.TxAborts {
		t.Errorf("abort causes sum to %d; want TxAborts, %d", sum, st.TxAborts)
	}
	t.Logf("%+v", st)
}

// TestRTMLockedFilter runs a Locked filter's writers and readers with
// elision on, where the processor has RTM: every key is found, critical
// sections commit as transactions, and the abort causes add up. It logs
// the LockStats (go test -v -run TestRTMLockedFilter), which BENCHMARKS.md
// records for the machine that has RTM.
func TestRTMLockedFilter(t *testing.T) {
	if !rtmSupported() {
		t.Skip("the processor lacks RTM or forces it to abort")
	}
	if raceEnabled {
		t.Skip("the race detector cannot see hardware transactions as synchronization")
	}
	withRTM(t, true)
	const n = 50_000
	f, err := New(n, WithMode(Locked), WithSeed(3))
	if err != nil {
		t.Fatal(err)
	}
	g := 4 * runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var k [8]byte
			for i := w; i < n*95/100; i += g {
				binary.LittleEndian.PutUint64(k[:], uint64(i))
				if err := f.Insert(k[:]); err != nil {
					t.Errorf("insert %d: %v", i, err)
					return
				}
				if !f.Lookup(k[:]) {
					t.Errorf("key %d absent after its insert", i)
					return
				}
			}
		}()
	}
	wg.Wait()
	st := f.LockStats()
	t.Logf("fill of %d keys by %d goroutines: %+v", n*95/100, g, st)
	if !st.Elided || st.TxCommits == 0 {
		t.Errorf("no transaction committed: %+v", st)
	}
	if sum := st.TxAbortsLockHeld + st.TxAbortsConflict + st.TxAbortsCapacity + st.TxAbortsOther; sum != st.TxAborts {
		t.Errorf("abort causes sum to %d; want TxAborts, %d", sum, st.TxAborts)
	}
}

func TestRTMTxCause(t *testing.T) {
	const ours = txLockHeld << 24
	for _, tc := range []struct {
		status uint32
		want   int
	}{
		{0, txCauseOther},
		{txAbortRetry, txCauseOther},
		{txAbortConflict | txAbortRetry, txCauseConflict},
		{txAbortCapacity, txCauseCapacity},
		{txAbortExplicit | ours, txCauseLockHeld},
		{txAbortExplicit | txAbortRetry | ours, txCauseLockHeld},
		{txAbortExplicit | 1<<24, txCauseOther},
	} {
		if got := txCause(tc.status); got != tc.want {
			t.Errorf("txCause(%#x) = %d; want %d", tc.status, got, tc.want)
		}
	}
}

func TestRTMTxRetryable(t *testing.T) {
	const ours = txLockHeld << 24
	for _, tc := range []struct {
		status uint32
		want   bool
	}{
		{0, false}, // interrupt, system call, unsupported instruction
		{txAbortRetry, true},
		{txAbortConflict, true},
		{txAbortConflict | txAbortRetry, true},
		{txAbortCapacity, false},
		{txAbortCapacity | txAbortConflict, true},
		{txAbortExplicit | ours, true},
		{txAbortExplicit | txAbortRetry | ours, true},
		{txAbortExplicit | 1<<24, false},
		{txAbortExplicit | txAbortRetry | 1<<24, false},
	} {
		t.Run(fmt.Sprintf("status=%#x", tc.status), func(t *testing.T) {
			if got := txRetryable(tc.status); got != tc.want {
				t.Errorf("txRetryable(%#x) = %v; want %v", tc.status, got, tc.want)
			}
		})
	}
}

// TestRTMAwaitFree checks the wait between transaction attempts: it returns
// at once for free lock words, waits for words that are freed soon, and gives
// up (so the goroutine joins the MCS queue) on words that stay held.
func TestRTMAwaitFree(t *testing.T) {
	var lw, hw atomic.Uint32
	if !awaitFree(&lw, &hw) {
		t.Error("got false for free words; want true")
	}
	hw.Store(mcsHeld)
	if awaitFree(&lw, &hw) {
		t.Error("got true for a word that stays held; want false")
	}
	lw.Store(mcsHeld)
	hw.Store(0)
	if awaitFree(&lw, &hw) {
		t.Error("got true for a word that stays held; want false")
	}
	// Freed by another goroutine while we wait: with GOMAXPROCS=1 only the
	// yield lets it run. The scheduler may run us again first (every 61st
	// schedule takes the global queue first, where Gosched put us), so up
	// to ten tries; an awaitFree that never yields, or never waits, fails
	// them all.
	withProcs(t, 1)
	for try := 1; ; try++ {
		lw.Store(mcsHeld)
		done := make(chan struct{})
		go func() { lw.Store(0); close(done) }()
		freed := awaitFree(&lw, &hw)
		<-done
		if freed {
			break
		}
		if try == 10 {
			t.Fatal("got false for a word freed during the wait, ten times; want true")
		}
	}
}

// TestHTMCPUID runs the CPUID assembly and checks that its answers are
// plausible and agree with the kernel's view (/proc/cpuinfo on Linux).
func TestHTMCPUID(t *testing.T) {
	maxLeaf, b, c, d := cpuid(0, 0)
	if !htmAsm {
		if maxLeaf != 0 || b != 0 || c != 0 || d != 0 || rtmSupported() {
			t.Errorf("got cpuid(0, 0) = %d, %d, %d, %d and rtmSupported()=%v without CPUID; want zeros and false",
				maxLeaf, b, c, d, rtmSupported())
		}
		return
	}
	if maxLeaf < 1 || maxLeaf > 0x100 {
		t.Errorf("got maximum leaf %#x; want in [1, 0x100]", maxLeaf)
	}
	vendor := string(le32(b)) + string(le32(d)) + string(le32(c))
	for _, r := range vendor {
		if r < ' ' || r > '~' {
			t.Errorf("got vendor %q; want 12 printable ASCII characters", vendor)
			break
		}
	}
	if _, _, _, d1 := cpuid(1, 0); d1&(1<<26) == 0 {
		t.Errorf("got CPUID.1:EDX %#x without SSE2 (bit 26); want it, every amd64 processor has it", d1)
	}
	_, b7, _, d7 := cpuid(7, 0)
	if want := maxLeaf >= 7 && b7&(1<<11) != 0 && d7&(1<<11) == 0; rtmSupported() != want {
		t.Errorf("got rtmSupported()=%v; want %v (leaf 7 EBX %#x EDX %#x)", rtmSupported(), want, b7, d7)
	}
	t.Logf("vendor %q, maximum leaf %#x, rtmSupported=%v", vendor, maxLeaf, rtmSupported())

	if runtime.GOOS != "linux" {
		return
	}
	info, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Logf("no /proc/cpuinfo (%v): not compared", err)
		return
	}
	sc := bufio.NewScanner(bytes.NewReader(info))
	sc.Buffer(nil, 1<<20)
	var kvendor, flags string
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "vendor_id":
			if kvendor == "" {
				kvendor = strings.TrimSpace(v)
			}
		case "flags":
			if flags == "" {
				flags = " " + strings.TrimSpace(v) + " "
			}
		}
	}
	if kvendor != "" && kvendor != vendor {
		t.Errorf("got vendor %q; want %q as in /proc/cpuinfo", vendor, kvendor)
	}
	if flags != "" && !strings.Contains(flags, " rtm ") && rtmSupported() {
		t.Error("got rtmSupported()=true while the kernel reports no rtm flag; want false")
	}
}

func le32(x uint32) []byte { return []byte{byte(x), byte(x >> 8), byte(x >> 16), byte(x >> 24)} }

// TestHTMEncoding checks the machine code of the RTM functions in the test
// binary itself, since they cannot run on processors without RTM. Where
// there is no assembly it checks the stubs instead.
func TestHTMEncoding(t *testing.T) {
	if !htmAsm {
		if got := xbegin(); got == txStarted || txRetryable(got) {
			t.Errorf("got xbegin() = %#x; want a status that is not retried", got)
		}
		if xtest() {
			t.Error("got xtest() = true; want false")
		}
		for name, f := range map[string]func(){
			"xend":           xend,
			"xabortLockHeld": xabortLockHeld,
		} {
			t.Run("func="+name, func(t *testing.T) {
				defer func() {
					if r := recover(); r != "unreachable" {
						t.Errorf("got panic %v; want \"unreachable\"", r)
					}
				}()
				f()
			})
		}
		// Had a stripe set elision on here by mistake, sections would still
		// exclude each other, through MCS. (Safe only because xbegin is the
		// Go stub on this build; with the assembly it would raise #UD.)
		s := newStripedLocks(64)
		s.elide = true
		g := s.lockBuckets(1, 2)
		if g.tx || s.stripes[1].tail.Load() != mcsHeld || s.stripes[2].tail.Load() != mcsHeld {
			t.Errorf("got guard %+v and tails %#x, %#x; want MCS locks held", g, s.stripes[1].tail.Load(), s.stripes[2].tail.Load())
		}
		s.unlockBuckets(g)
		if st := s.stats(); st.TxAborts != 1 || st.Fallbacks != 1 || st.TxCommits != 0 {
			t.Errorf("got %+v; want 1 abort, 1 fallback", st)
		}
		return
	}
	want := map[string][]byte{
		// MOVL $-1, AX; XBEGIN +0; MOVL AX, ret+0(FP); RET
		"xbegin": {0xb8, 0xff, 0xff, 0xff, 0xff, 0xc7, 0xf8, 0, 0, 0, 0, 0x89, 0x44, 0x24, 0x08, 0xc3},
		// XEND; RET
		"xend": {0x0f, 0x01, 0xd5, 0xc3},
		// XABORT $0xff; RET
		"xabortLockHeld": {0xc6, 0xf8, txLockHeld, 0xc3},
		// XTEST; SETNE ret+0(FP); RET
		"xtest": {0x0f, 0x01, 0xd6, 0x0f, 0x95, 0x44, 0x24, 0x08, 0xc3},
		// MOVL eax+0(FP), AX; MOVL ecx+4(FP), CX; CPUID;
		// MOVL AX, a+8(FP); MOVL BX, b+12(FP); MOVL CX, c+16(FP); MOVL DX, d+20(FP); RET
		"cpuid": {0x8b, 0x44, 0x24, 0x08, 0x8b, 0x4c, 0x24, 0x0c, 0x0f, 0xa2,
			0x89, 0x44, 0x24, 0x10, 0x89, 0x5c, 0x24, 0x14, 0x89, 0x4c, 0x24, 0x18, 0x89, 0x54, 0x24, 0x1c, 0xc3},
	}
	checkAssembly(t, want)
}

// checkAssembly checks that each function named in want (by its name in
// this package) assembled to exactly the bytes given, reading the test
// binary itself.
func checkAssembly(t *testing.T, want map[string][]byte) {
	t.Helper()
	// go test strips the symbol table, but the function table the runtime
	// uses for tracebacks (.gopclntab) names every function.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Logf("test binary is not ELF (%v): encodings not checked", err)
		return
	}
	defer f.Close()
	text, pcln := f.Section(".text"), f.Section(".gopclntab")
	if text == nil || pcln == nil {
		t.Fatalf("test binary has no .text or .gopclntab section")
	}
	data, err := pcln.Data()
	if err != nil {
		t.Fatalf("reading .gopclntab: %v", err)
	}
	tab, err := gosym.NewTable(nil, gosym.NewLineTable(data, text.Addr))
	if err != nil {
		t.Fatalf("parsing .gopclntab: %v", err)
	}
	pkg := reflect.TypeFor[lockGuard]().PkgPath()
	for name, code := range want {
		t.Run("func="+name, func(t *testing.T) {
			var found []string
			for _, fn := range tab.Funcs {
				if fn.Name != pkg+"."+name {
					continue
				}
				got := make([]byte, fn.End-fn.Entry)
				if _, err := text.ReadAt(got, int64(fn.Entry-text.Addr)); err != nil {
					t.Fatalf("reading %s: %v", fn.Name, err)
				}
				// The linker pads functions with INT3 (0xcc).
				body := got
				for len(body) > 0 && body[len(body)-1] == 0xcc {
					body = body[:len(body)-1]
				}
				if bytes.Equal(body, code) {
					return
				}
				found = append(found, fmt.Sprintf("% x", body))
			}
			t.Errorf("%s.%s: got code %q; want % x", pkg, name, found, code)
		})
	}
}
