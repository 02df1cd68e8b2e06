package bench_test

import (
	"flag"
	"fmt"
	"runtime"
	"testing"

	"github.com/seed25b00da8/cuckoo/bench/compare"
	"github.com/seed25b00da8/cuckoo/internal/benchkit"
)

// The comparison as go test benchmarks, one per cell:
//
//	go test -run '^$' -bench 'impl=seiflotfy-mutex/workload=lookup-pos/n=1M/g=2'
//	go test -run '^$' -bench . -args -compare.sizes 1M,32M
//
// Each benchmark runs b.N operations split over exactly g goroutines (the
// same runner as cmd/compare, so g=1 means one goroutine whatever
// GOMAXPROCS is) and reports ops/s and allocations.

var (
	sizesFlag = flag.String("compare.sizes", "1M", "comma-separated key counts for BenchmarkCompare")
	gsFlag    = flag.String("compare.goroutines", "1,2,64", "comma-separated goroutine counts for BenchmarkCompare")
)

// fixture caches the last structure built, so that the cells of one impl
// and size share it.
type fixture struct {
	impl   string
	n      int
	filled int
	f      compare.Filter
}

func (fx *fixture) get(b *testing.B, env *compare.Env, im compare.Impl, filled int) compare.Filter {
	if fx.f != nil && fx.impl == im.Name && fx.n == env.N && fx.filled == filled {
		return fx.f
	}
	fx.f = nil
	runtime.GC()
	f, r, err := env.Build(im, filled)
	if err != nil {
		b.Skipf("%s: %v", im.Name, err)
	}
	if r.InsertFailed != 0 {
		b.Fatalf("%s: %d of %d inserts failed", im.Name, r.InsertFailed, filled)
	}
	*fx = fixture{impl: im.Name, n: env.N, filled: filled, f: f}
	return f
}

func BenchmarkCompare(b *testing.B) {
	sizes, err := benchkit.ParseSizes(*sizesFlag, 0)
	if err != nil {
		b.Fatal(err)
	}
	gs, err := benchkit.ParseGoroutines(*gsFlag)
	if err != nil {
		b.Fatal(err)
	}
	envs := map[int]*compare.Env{}
	env := func(n int) *compare.Env {
		if envs[n] == nil {
			envs[n] = compare.NewEnv(n)
		}
		return envs[n]
	}
	var fx fixture
	for _, im := range compare.All() {
		for _, size := range sizes {
			for _, w := range compare.Workloads {
				for _, g := range gs {
					if ok, _ := compare.Supports(im, w, g); !ok {
						continue
					}
					name := fmt.Sprintf("impl=%s/workload=%s/n=%s/g=%d", im.Name, w, size.Name, g)
					b.Run(name, func(b *testing.B) {
						benchCell(b, &fx, env(size.N), im, w, g)
					})
				}
			}
		}
	}
}

func benchCell(b *testing.B, fx *fixture, env *compare.Env, im compare.Impl, w compare.Workload, g int) {
	b.ReportAllocs()
	var ops int64
	switch w {
	case compare.Fill:
		// Fill from empty, starting over with a new structure (timer
		// stopped) whenever n keys are in.
		fx.f = nil
		for left := b.N; left > 0; {
			k := min(left, env.N)
			b.StopTimer()
			runtime.GC()
			if im.Static {
				b.StartTimer()
				if _, _, err := env.Build(im, k); err != nil {
					b.Fatal(err)
				}
			} else {
				f, err := im.New(env.N, nil)
				if err != nil {
					b.Skipf("%s: %v", im.Name, err)
				}
				b.StartTimer()
				if r := env.RunOps(f, im, compare.Fill, g, 0, int64(k)); r.InsertFailed != 0 {
					b.Fatalf("%d inserts failed", r.InsertFailed)
				}
			}
			left -= k
			ops += int64(k)
		}
	case compare.Mixed:
		fill := compare.MixedFill(env.N)
		f := fx.get(b, env, im, fill)
		b.ResetTimer()
		ops = env.RunOps(f, im, w, g, fill, int64(b.N)).Ops
	default:
		f := fx.get(b, env, im, env.N)
		b.ResetTimer()
		ops = env.RunOps(f, im, w, g, env.N, int64(b.N)).Ops
	}
	b.StopTimer()
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(ops)/s, "ops/s")
	}
}
