package cuckoo

import (
	"sync"
	"testing"
)

func TestStackShardStablePerGoroutine(t *testing.T) {
	first := stackShard(6)
	for i := 0; i < 1000; i++ {
		if s := stackShard(6); s != first {
			t.Fatalf("call %d: shard %d, first call %d", i, s, first)
		}
	}
	if first >= 1<<6 {
		t.Fatalf("shard %d out of range [0, 64)", first)
	}
}

// TestStackShardSpreads checks that goroutines land on different shards:
// 64 goroutines alive at once must use more than a few of 64 shards (a
// constant or badly mixed choice would put them all on one or two).
func TestStackShardSpreads(t *testing.T) {
	const g = 64
	shards := make([]uint, g)
	var ready, done sync.WaitGroup
	ready.Add(g)
	done.Add(g)
	release := make(chan struct{})
	for i := 0; i < g; i++ {
		go func() {
			defer done.Done()
			shards[i] = stackShard(6)
			ready.Done()
			<-release // keep every stack alive until all have chosen
		}()
	}
	ready.Wait()
	close(release)
	done.Wait()
	seen := map[uint]bool{}
	for _, s := range shards {
		if s >= 1<<6 {
			t.Fatalf("shard %d out of range", s)
		}
		seen[s] = true
	}
	// 64 balls in 64 bins occupy about 40 bins; demand a third of that.
	if len(seen) < 14 {
		t.Fatalf("64 goroutines used only %d of 64 shards: %v", len(seen), shards)
	}
	t.Logf("64 goroutines used %d of 64 shards", len(seen))
}

func (c *shardedCount) reset() {
	for i := range c.shards {
		c.shards[i].n[0].Store(0)
	}
}
