package cuckoo

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"runtime"
	"testing"
	"time"
)

// TestStatsRelocationCounted fills both buckets of a key by hand, with
// fingerprints whose other buckets are empty, so that inserting the key
// must relocate exactly one fingerprint: Stats().Relocations goes from 0 to
// 1, and nothing else moves.
func TestStatsRelocationCounted(t *testing.T) {
	for _, mode := range apiModes {
		t.Run("mode="+mode.String(), func(t *testing.T) {
			f, err := New(1000, WithMode(mode), WithSeed(9))
			if err != nil {
				t.Fatal(err)
			}
			key := []byte("relocate me")
			b1, fp, _ := f.hash(key)
			b2 := f.alt(b1, fp)
			if b1 == b2 {
				t.Fatal("the key has one bucket under seed 9; pick another seed")
			}
			l := &f.lay
			for _, b := range []uint64{b1, b2} {
				w := uint64(0)
				for s, x := 0, uint64(1); s < int(l.b); x++ {
					if a := f.alt(b, x); x != fp && a != b1 && a != b2 {
						w = l.setSlot(w, s, x)
						s++
					}
				}
				f.t.words[b].Store(w)
			}
			f.count.add(2 * int64(l.b))
			if st := f.Stats(); st.Relocations != 0 || st.Full != 0 {
				t.Fatalf("before: Relocations, Full = %d, %d; want 0, 0", st.Relocations, st.Full)
			}
			if err := f.Insert(key); err != nil {
				t.Fatalf("Insert with both buckets full and room one move away: %v", err)
			}
			st := f.Stats()
			if st.Relocations != 1 || st.Full != 0 || st.KCASRetries != 0 {
				t.Errorf("after: Relocations, Full, KCASRetries = %d, %d, %d; want 1, 0, 0", st.Relocations, st.Full, st.KCASRetries)
			}
			if want := 2*int(l.b) + 1; st.Len != want || st.Cap != f.Cap() {
				t.Errorf("Len, Cap = %d, %d; want %d, %d", st.Len, st.Cap, want, f.Cap())
			}
		})
	}
}

// TestStatsFullAndDerived fills a filter to its first ErrFull and checks the
// Full counter against the ErrFull results seen, and the derived figures
// against their definitions.
func TestStatsFullAndDerived(t *testing.T) {
	for _, mode := range apiModes {
		for _, bits := range []int{8, 12, 15, Bits12x5} {
			f, err := New(2000, append(LayoutOptions(bits), WithMode(mode))...)
			if err != nil {
				t.Fatal(err)
			}
			if st := f.Stats(); st.Len != 0 || st.BitsPerKey != 0 || st.FalsePositiveRate != 0 || st.Mode != mode || st.FingerprintBits != LayoutBits(bits) || st.SlotsPerBucket != LayoutSlots(bits) {
				t.Fatalf("empty: %+v; want Len, BitsPerKey, FalsePositiveRate 0, mode %v, bits %d", st, mode, bits)
			}
			fulls := 0
			for i := 0; fulls < 5; i++ {
				if err := f.Insert(apiKey('x', i)); errors.Is(err, ErrFull) {
					fulls++
				}
			}
			_, _ = f.InsertUnique(apiKey('y', 0)) // an ErrFull or a refusal
			if _, err := f.InsertUnique(apiKey('y', 1)); errors.Is(err, ErrFull) {
				fulls++
			}
			if _, err := f.InsertBatch([][]byte{apiKey('z', 0), apiKey('z', 1)}); errors.Is(err, ErrFull) {
				fulls++
			}
			st := f.Stats()
			if st.Full < uint64(fulls) || st.Full > uint64(fulls)+1 {
				t.Errorf("mode=%v/bits=%d: Full = %d; want the %d ErrFull results seen (+1 for an unchecked InsertUnique)", mode, bits, st.Full, fulls)
			}
			if st.Relocations == 0 {
				t.Errorf("mode=%v/bits=%d: Relocations = 0 after filling; want > 0", mode, bits)
			}
			alpha := float64(st.Len) / float64(st.Cap)
			if st.LoadFactor != alpha || st.Len != f.Len() {
				t.Errorf("LoadFactor, Len = %v, %d; want %v, %d", st.LoadFactor, st.Len, alpha, f.Len())
			}
			// 64 bits per table word: a word is one bucket, or two in
			// the packed layout.
			if want := 64 * float64(len(f.t.words)) / float64(st.Len); math.Abs(st.BitsPerKey-want) > 1e-9 {
				t.Errorf("BitsPerKey = %v; want %v", st.BitsPerKey, want)
			}
			if want := 2 * float64(LayoutSlots(bits)) * alpha / float64(int(1)<<LayoutBits(bits)-1); math.Abs(st.FalsePositiveRate-want) > 1e-12 {
				t.Errorf("FalsePositiveRate = %v; want %v", st.FalsePositiveRate, want)
			}
			if mode == LockFree && st.Lock.Waits != 0 {
				t.Errorf("LockFree Lock.Waits = %d; want 0", st.Lock.Waits)
			}
		}
	}
	var z Filter
	if st := z.Stats(); st != (Stats{}) {
		t.Errorf("zero Filter Stats() = %+v; want the zero Stats", st)
	}
}

// TestStatsLockWaitCounted holds a bucket's stripe while another goroutine
// deletes from that bucket: the delete must queue, and Lock.Waits must count
// it.
func TestStatsLockWaitCounted(t *testing.T) {
	withPin(t, false) // holds a section while it blocks
	f, err := New(1000, WithMode(Locked), WithSeed(5))
	if err != nil {
		t.Fatal(err)
	}
	key := []byte("waiter")
	if err := f.Insert(key); err != nil {
		t.Fatal(err)
	}
	before := f.Stats().Lock.Waits
	b1, fp, _ := f.hash(key)
	b2 := f.alt(b1, fp)
	g := f.locks.lockBuckets(b1, b2)
	done := make(chan bool)
	go func() { done <- f.Delete(key) }()
	// The delete queues on the held stripe; wait until it is counted.
	deadline := time.Now().Add(time.Minute)
	for f.Stats().Lock.Waits == before {
		if time.Now().After(deadline) {
			f.locks.unlockBuckets(g)
			t.Fatal("Lock.Waits did not grow within a minute of a Delete queueing on a held stripe")
		}
		runtime.Gosched()
	}
	f.locks.unlockBuckets(g)
	if !<-done {
		t.Error("Delete after the wait: got false; want true")
	}
	if got := f.Stats().Lock.Waits - before; got < 1 {
		t.Errorf("Lock.Waits grew by %d; want at least 1", got)
	}
}

// TestStatsCountersKeptAcrossLoad checks the Stats doc's promise that the
// event counters count from New: UnmarshalBinary and ReadFrom replace the
// table but keep the receiver's sums.
func TestStatsCountersKeptAcrossLoad(t *testing.T) {
	for _, mode := range []Mode{LockFree, Locked} {
		for _, bits := range []int{8, 12, 15} {
			f, err := New(2000, WithFingerprintBits(bits), WithMode(mode), WithSeed(3))
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; ; i++ {
				if f.InsertString(fmt.Sprint("k", i)) != nil {
					break
				}
			}
			before := f.Stats()
			if before.Relocations == 0 || before.Full == 0 {
				t.Fatalf("mode %v bits %d: fill counted %d relocations, %d full", mode, bits, before.Relocations, before.Full)
			}
			data, err := f.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if err := f.UnmarshalBinary(data); err != nil {
				t.Fatal(err)
			}
			if _, err := f.ReadFrom(bytes.NewReader(data)); err != nil {
				t.Fatal(err)
			}
			after := f.Stats()
			if after.Relocations != before.Relocations || after.Full != before.Full {
				t.Errorf("mode %v bits %d: relocations %d -> %d, full %d -> %d after UnmarshalBinary and ReadFrom",
					mode, bits, before.Relocations, after.Relocations, before.Full, after.Full)
			}
		}
	}
}
