package attention

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkPrefill is causal self-attention as in a prompt's prefill: T = S,
// d_k = d_h, 1 or 8 query heads with as many or 2 KV heads, random inputs.
// GFLOP/s counts the causal FLOPs 2·T·S·(d_k+d_h)/2 per query head over the
// wall time, cpu-GFLOP/s over the process's CPU time (what a loaded machine
// disturbs least; run with GOMAXPROCS=1 so that it is one goroutine's).
func BenchmarkPrefill(b *testing.B) {
	for _, c := range []struct{ T, dk, heads, kv int }{
		{512, 64, 1, 1}, {512, 64, 8, 8}, {512, 64, 8, 2},
		{2048, 128, 1, 1}, {2048, 128, 8, 8}, {2048, 128, 8, 2},
	} {
		rng := rand.New(rand.NewPCG(1, 2))
		q := randMat(rng, c.T, c.heads*c.dk, 0)
		k := randMat(rng, c.T, c.kv*c.dk, 0)
		v := randMat(rng, c.T, c.kv*c.dk, 0)
		out := randMat(rng, c.T, c.heads*c.dk, 0)
		flops := float64(c.heads) * 2 * float64(c.T) * float64(c.T) * float64(2*c.dk) / 2
		var ws Workspace
		b.Run(fmt.Sprintf("T=S=%d,dk=%d,h=%d,kv=%d", c.T, c.dk, c.heads, c.kv), func(b *testing.B) {
			benchISAs(b, func(b *testing.B) {
				GroupedQuery(out, q, k, v, c.heads, c.kv, Causal, &ws) // warm ws
				b.ResetTimer()
				c0 := processCPU()
				for range b.N {
					GroupedQuery(out, q, k, v, c.heads, c.kv, Causal, &ws)
				}
				c1 := processCPU()
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				if c0 >= 0 && c1 > c0 {
					b.ReportMetric(flops*float64(b.N)/float64(c1-c0), "cpu-GFLOP/s")
				}
			})
		})
	}
}

// BenchmarkPrefillTiles sweeps the block sizes of the tiled attention on one
// causal head (attention/DESIGN.md records the choice).
func BenchmarkPrefillTiles(b *testing.B) {
	for _, c := range []struct{ T, dk int }{{512, 64}, {2048, 128}} {
		rng := rand.New(rand.NewPCG(1, 2))
		q, k, v := randMat(rng, c.T, c.dk, 0), randMat(rng, c.T, c.dk, 0), randMat(rng, c.T, c.dk, 0)
		out := randMat(rng, c.T, c.dk, 0)
		flops := 2 * float64(c.T) * float64(c.T) * float64(2*c.dk) / 2
		var ws Workspace
		for _, rows := range []int{96, 192, 288, 384, 512} {
			for _, keys := range []int{128, 256, 512} {
				b.Run(fmt.Sprintf("T=S=%d,dk=%d/rows=%d,keys=%d", c.T, c.dk, rows, keys), func(b *testing.B) {
					setTiles(b, rows, keys)
					benchISAs(b, func(b *testing.B) {
						MultiHead(out, q, k, v, 1, Causal, &ws)
						b.ResetTimer()
						c0 := processCPU()
						for range b.N {
							MultiHead(out, q, k, v, 1, Causal, &ws)
						}
						if c1 := processCPU(); c0 >= 0 && c1 > c0 {
							b.ReportMetric(flops*float64(b.N)/float64(c1-c0), "cpu-GFLOP/s")
						}
					})
				})
			}
		}
	}
}
