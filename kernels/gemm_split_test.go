//go:build heedtrial

package kernels

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

// TestGemmSplitTrial measures, by the wall clock, n×n×n products on one
// goroutine and split in two (the grid of parallel, forced), interleaved,
// best of the rounds: the measurement behind gemmParallelWork. Only
// meaningful with two otherwise idle cores.
func TestGemmSplitTrial(t *testing.T) {
	prev := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(prev)
	mk := gemmMicroFor(Active())
	if mk == nil {
		t.Skip("no micro-kernel")
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{48, 64, 96, 128, 192, 256, 512, 1024} {
		a, _ := testMatrix(rng, n, n, 0, 0, 0, 0)
		b, _ := testMatrix(rng, n, n, 0, 0, 0, 0)
		c, _ := testMatrix(rng, n, n, 0, 0, 0, 0)
		reps := max(1, (1<<26)/(n*n*n))
		var best [2]time.Duration
		for r := 0; r < 20; r++ {
			for parts := 1; parts <= 2; parts++ {
				g := gemmOp{m: n, n: n, k: n, alpha: 1, a: a.Data, lda: n, b: b.Data, ldb: n, c: c.Data, ldc: n, micro: mk}
				t0 := time.Now()
				for j := 0; j < reps; j++ {
					if parts == 1 {
						g.run(&trialBuf)
					} else {
						g.parallel(2)
					}
				}
				if d := time.Since(t0) / time.Duration(reps); best[parts-1] == 0 || d < best[parts-1] {
					best[parts-1] = d
				}
			}
		}
		t.Logf("n=%4d: one goroutine %v, two %v: speed-up %.2f", n, best[0], best[1], float64(best[0])/float64(best[1]))
	}
}

// trialBuf holds the packing buffers of the serial products the trials time.
var trialBuf gemmBuf
