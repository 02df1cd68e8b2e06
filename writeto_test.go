package cuckoo

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"
)

// counterSum adds up the migration counters of every bucket: it grows by two
// with every relocation step (until a counter wraps), which shows that an
// insert relocated.
func counterSum(f *Filter) uint64 {
	var s uint64
	for b := uint64(0); b < f.m; b++ {
		s += f.lay.counter(f.t.load(b))
	}
	return s
}

// fillToLoad inserts keys "<prefix><i>" until the filter holds load*Cap()
// fingerprints and returns the next unused index.
func fillToLoad(t *testing.T, f *Filter, prefix string, load float64) int {
	t.Helper()
	i := 0
	for float64(f.Len()) < load*float64(f.Cap()) {
		if err := f.Insert([]byte(fmt.Sprintf("%s%d", prefix, i))); err != nil {
			t.Fatalf("filling to %.0f%%: %v at %d keys", 100*load, err, f.Len())
		}
		i++
	}
	return i
}

// blockingWriter blocks its first Write until release is closed, after
// telling entered.
type blockingWriter struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
	buf     bytes.Buffer
}

func (w *blockingWriter) Write(p []byte) (int, error) {
	w.once.Do(func() {
		close(w.entered)
		<-w.release
	})
	return w.buf.Write(p)
}

// TestWriteToSlowWriterDoesNotBlockInserts holds WriteTo inside its writer
// while inserts that need relocations run at 95% load. Before WriteTo took
// its copy first, relocations waited for the whole write (the writer's
// speed); now they only wait while the table is copied, so the inserts
// finish while the writer is still blocked.
func TestWriteToSlowWriterDoesNotBlockInserts(t *testing.T) {
	for _, mode := range []Mode{LockFree, Locked} {
		t.Run(mode.String(), func(t *testing.T) {
			f, err := New(20000, WithMode(mode), WithSeed(3))
			if err != nil {
				t.Fatal(err)
			}
			next := fillToLoad(t, f, "old-", 0.90)
			w := &blockingWriter{entered: make(chan struct{}), release: make(chan struct{})}
			done := make(chan error, 1)
			go func() { _, err := f.WriteTo(w); done <- err }()
			<-w.entered

			before := counterSum(f)
			inserted := make(chan int, 1)
			go func() {
				n := 0
				for i := next; float64(f.Len()) < 0.95*float64(f.Cap()); i++ {
					if f.Insert([]byte(fmt.Sprintf("old-%d", i))) == nil {
						n++
					}
				}
				inserted <- n
			}()
			select {
			case n := <-inserted:
				if counterSum(f) == before {
					t.Fatalf("%d inserts to 95%% made no relocation; the test shows nothing", n)
				}
			case <-time.After(20 * time.Second):
				close(w.release)
				t.Fatal("inserts needing relocations waited for a blocked WriteTo writer")
			}
			close(w.release)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			var g Filter
			if _, err := g.ReadFrom(&w.buf); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < next; i++ {
				if !g.Lookup([]byte(fmt.Sprintf("old-%d", i))) {
					t.Fatalf("snapshot lost key old-%d, inserted before WriteTo", i)
				}
			}
		})
	}
}

// insertingWriter inserts keys into the filter being written from inside
// Write, until the filter is at 95% load: a writer that used to deadlock
// as soon as one of its inserts needed a relocation.
type insertingWriter struct {
	f     *Filter
	next  int
	moved bool
}

func (w *insertingWriter) Write(p []byte) (int, error) {
	before := counterSum(w.f)
	for float64(w.f.Len()) < 0.95*float64(w.f.Cap()) {
		if err := w.f.Insert([]byte(fmt.Sprintf("w-%d", w.next))); err != nil {
			break
		}
		w.next++
	}
	if counterSum(w.f) != before {
		w.moved = true
	}
	return len(p), nil
}

func TestWriteToWriterInsertsIntoFilter(t *testing.T) {
	for _, mode := range []Mode{LockFree, Locked} {
		t.Run(mode.String(), func(t *testing.T) {
			f, err := New(20000, WithMode(mode), WithSeed(5))
			if err != nil {
				t.Fatal(err)
			}
			fillToLoad(t, f, "old-", 0.90)
			w := &insertingWriter{f: f}
			done := make(chan error, 1)
			go func() { _, err := f.WriteTo(w); done <- err }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("WriteTo deadlocked with a writer that inserts into the filter")
			}
			if !w.moved {
				t.Fatal("the writer's inserts made no relocation; the test shows nothing")
			}
		})
	}
}
