//go:build heedtrial && amd64 && !purego

package kernels

import (
	"math/rand/v2"
	"testing"
)

// TestGemmTrial compares candidate micro-kernel tiles (generated with
// go run . -trial in asmgen) on whole products: for each size, the variants run
// interleaved, one call each per round, and the table gives each one's best
// CPU time per call over the rounds as GFLOP/s (a best time is what load on a
// shared machine disturbs least).
func TestGemmTrial(t *testing.T) {
	withKC := func(mk *gemmMicro, kc int) *gemmMicro {
		mk.kc = kc
		mk.mc = max(mk.mr, min(1024, (2<<20)/2/(4*kc))/mk.mr*mk.mr)
		return mk
	}
	variants := []struct {
		name string
		mk   *gemmMicro
	}{
		{"avx512 6x64", withKC(newGemmMicro(6, 64, gemmMicroAVX512, gemmMicroRowsAVX512), 256)},
		{"avx512 6x64", withKC(newGemmMicro(6, 64, gemmMicroAVX512, gemmMicroRowsAVX512), 384)},
		{"avx512 6x64", withKC(newGemmMicro(6, 64, gemmMicroAVX512, gemmMicroRowsAVX512), 512)},
		{"avx512 14x32", withKC(newGemmMicro(14, 32, gemm14x32AVX512, nil), 384)},
		{"avx512 12x32", withKC(newGemmMicro(12, 32, gemm12x32AVX512, nil), 384)},
		{"avx512 8x48", withKC(newGemmMicro(8, 48, gemm8x48AVX512, nil), 384)},
		{"ymm32 14x16", withKC(newGemmMicro(14, 16, gemm14x16YMM, nil), 384)},
		{"ymm32 12x16", withKC(newGemmMicro(12, 16, gemm12x16YMM, nil), 384)},
		{"ymm32 8x24", withKC(newGemmMicro(8, 24, gemm8x24YMM, nil), 384)},
		{"avx2 6x16", withKC(newGemmMicro(6, 16, gemmMicroAVX2, gemmMicroRowsAVX2), 256)},
		{"avx2 6x16", withKC(newGemmMicro(6, 16, gemmMicroAVX2, gemmMicroRowsAVX2), 512)},
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{64, 256, 512, 1024} {
		a, _ := testMatrix(rng, n, n, 0, 0, 0, 0)
		b, _ := testMatrix(rng, n, n, 0, 0, 0, 0)
		c, _ := testMatrix(rng, n, n, 0, 0, 0, 0)
		best := make([]int64, len(variants))
		reps := max(1, (1<<27)/(n*n*n))
		for r := 0; r < 15; r++ {
			for i, v := range variants {
				g := gemmOp{m: n, n: n, k: n, alpha: 1, a: a.Data, lda: n, b: b.Data, ldb: n, c: c.Data, ldc: n, micro: v.mk}
				t0 := processCPU()
				for j := 0; j < reps; j++ {
					g.run(&trialBuf)
				}
				if d := (processCPU() - t0) / int64(reps); best[i] == 0 || d < best[i] {
					best[i] = d
				}
			}
		}
		for i, v := range variants {
			t.Logf("n=%4d %-14s kc=%3d mc=%4d: %6.1f GFLOP/s", n, v.name, v.mk.kc, v.mk.mc, 2*float64(n*n*n)/float64(best[i]))
		}
	}
}
