package cuckoo

import (
	"encoding/binary"
	"testing"
)

// TestGrowingDeleteEverythingDrift inserts n distinct keys into
// NewGrowing(1000) and deletes each once. Every Delete must find its key,
// and Len must end at the extra copies splits made of void entries, within
// the bound documented at Growing.Len: a shard of S slots after D
// doublings holds at most S·(D-6)/512 of them. Entries written while the
// shard's table was in (s/2, s] buckets fill at most 2s slots; they turn
// void after 8 splits (a table 256 times larger) and from then on double
// with each split, so at m buckets they have at most m/(256s) copies each:
// at most 4m/512 slots per such size class, of which the classes s <=
// m/512 (D-8 of them, plus the first table's) hold copies beyond the
// first.
func TestGrowingDeleteEverythingDrift(t *testing.T) {
	n := Sized(200_000, 1_000_000, 8_000_000)
	if raceEnabled {
		n = Sized(50_000, 200_000, 1_000_000)
	}
	g := newTestGrowing(t, 1000)
	var k [8]byte
	for i := range n {
		binary.LittleEndian.PutUint64(k[:], uint64(i))
		if err := g.Insert(k[:]); err != nil {
			t.Fatalf("Insert(%d): %v", i, err)
		}
	}
	var bound float64
	for i := range g.st.shards {
		x := g.st.shards[i].cur.Load()
		bound += float64(x.m*slotsPerBucket) * max(float64(x.d)-6, 0) / 512
	}
	for i := range n {
		binary.LittleEndian.PutUint64(k[:], uint64(i))
		if !g.Delete(k[:]) {
			t.Fatalf("Delete(%d) found nothing", i)
		}
	}
	still := 0
	for i := range n {
		binary.LittleEndian.PutUint64(k[:], uint64(i))
		if g.Lookup(k[:]) {
			still++
		}
	}
	t.Logf("%d keys, %d doublings: Len %d after deleting all (bound %.0f), %d deleted keys still look up true", n, g.Doublings(), g.Len(), bound, still)
	if float64(g.Len()) > bound {
		t.Fatalf("Len %d after deleting every key, above the bound %.0f", g.Len(), bound)
	}
}
