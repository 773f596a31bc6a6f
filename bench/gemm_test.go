//go:build amd64 && !purego

package bench

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/heedml/heed/kernels"
)

// fmaProbe returns the variant of bench's FMA probe that reached the FMA
// peak of isa (gemmPeaks: AVX-512's for AVX512, AVX2's for the others) and
// the flops of one of its iterations.
func fmaProbe(isa kernels.ISA) (fma func(iters int, a float32) float32, flopsPerIter int) {
	l := gemmPeaks().loop(isa)
	return l.run, l.flops
}

// widestISA returns AVX512 where this CPU and build have it, else AVX2.
func widestISA() kernels.ISA {
	if slices.Contains(kernels.Supported(), kernels.AVX512) {
		return kernels.AVX512
	}
	return kernels.AVX2
}

// gemmCeilings returns the FMA peak of one core with AVX-512 (bench's FMA
// ceiling where the CPU has it) and with AVX2, in GFLOP/s: the fastest
// variants of the FMA probe (gemmPeaks), measured once.
func gemmCeilings() (avx512, avx2 float64) {
	p := gemmPeaks()
	return p.avx512.GFlops, p.avx2.GFlops
}

// BenchmarkGemmPeers times every GEMM row for heed (under each ISA) and each
// peer of this build, single-threaded: run it with GOMAXPROCS=1 (gonum and vek
// split over GOMAXPROCS goroutines), OPENBLAS_NUM_THREADS=1 and, for OpenBLAS
// 0.3.21 on CPUs it misdetects, OPENBLAS_CORETYPE=SkylakeX, with -tags
// heedcgo for OpenBLAS. It reports GFLOP/s of process CPU time (which waiting
// for a busy CPU does not inflate) and that as a fraction of the FMA ceiling
// of the widest ISA ("of-ceiling") and of AVX2 ("of-avx2-ceiling").
func BenchmarkGemmPeers(b *testing.B) {
	c512, c256 := gemmCeilings()
	b.Log(gemmPeaks())
	rng := rand.New(rand.NewPCG(1, 2))
	type peer struct {
		name string
		isa  kernels.ISA
		p    *GemmPeer
	}
	var peers []peer
	for _, isa := range kernels.Supported() {
		if isa != kernels.Generic {
			peers = append(peers, peer{"heed-" + isa.String(), isa, GemmPeers[0]})
		}
	}
	for _, p := range GemmPeers[1:] {
		peers = append(peers, peer{p.Name, kernels.Active(), p})
	}
	prev := kernels.Active()
	defer kernels.Use(prev)
	for _, s := range GemmShapes {
		a, bm, c := gemmOperands(rng, s)
		for _, p := range peers {
			b.Run(s.Name+"/"+p.name, func(b *testing.B) {
				kernels.Use(p.isa)
				if p.p.Enter != nil {
					p.p.Enter()
				}
				if !p.p.Gemm(s.TransB, a, bm, c) {
					b.Skip("shape not supported")
				}
				b.ResetTimer()
				t0, _ := cpuTime()
				for range b.N {
					p.p.Gemm(s.TransB, a, bm, c)
				}
				t1, _ := cpuTime()
				gf := s.Flops() * float64(b.N) / float64(t1-t0)
				b.ReportMetric(gf, "cpu-GFLOP/s")
				b.ReportMetric(gf/c512, "of-ceiling")
				b.ReportMetric(gf/c256, "of-avx2-ceiling")
				flagAbovePeak(b, gf/c512)
			})
		}
	}
}

// gemmOperands returns random operands for s: A (M×K), B (K×N, or N×K when
// s.TransB) and C (M×N, zeros).
func gemmOperands(rng *rand.Rand, s GemmShape) (a, b, c kernels.Matrix) {
	a = matrix(rng, s.M, s.K, 1)
	b = matrix(rng, s.K, s.N, 1)
	if s.TransB {
		b = matrix(rng, s.N, s.K, 1)
	}
	return a, b, matrix(rng, s.M, s.N, 0)
}

// BenchmarkGemmThreads times heed's n=1024 product with GOMAXPROCS 1 and 2 by
// the wall clock: the ratio of the two is the speed-up of the split (only
// meaningful on an otherwise idle machine); and the FMA probe on one and two
// goroutines, the speed-up the machine itself gives.
func BenchmarkGemmThreads(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 1024
	a, bm, c := matrix(rng, n, n, 1), matrix(rng, n, n, 1), matrix(rng, n, n, 0)
	for _, procs := range []int{1, 2} {
		b.Run(map[int]string{1: "procs=1", 2: "procs=2"}[procs], func(b *testing.B) {
			prev := runtime.GOMAXPROCS(procs)
			defer runtime.GOMAXPROCS(prev)
			for range b.N {
				kernels.Gemm(kernels.NoTrans, kernels.NoTrans, 1, a, bm, 0, c)
			}
			b.ReportMetric(2*n*n*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
	// The machine's own two-core speed-up, in the same run: the FMA probe of
	// the widest ISA on one goroutine and on two at once (the same work per
	// goroutine, GFLOP/s of both together). GEMM's ratio over this one is
	// what the split achieves of what the cores give (frequency, the other
	// jobs on the second core).
	fma, flops := fmaProbe(widestISA())
	for _, procs := range []int{1, 2} {
		b.Run(map[int]string{1: "fma/procs=1", 2: "fma/procs=2"}[procs], func(b *testing.B) {
			prev := runtime.GOMAXPROCS(procs)
			defer runtime.GOMAXPROCS(prev)
			const iters = 1 << 20
			var wg sync.WaitGroup
			var out [2]float32
			for range b.N {
				for g := range procs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						out[g] = fma(iters, 1)
					}()
				}
				wg.Wait()
			}
			sink = out[0] + out[1]
			b.ReportMetric(float64(procs*iters*flops)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// TestGemmPeersMatch checks every GEMM peer against a float64 product on a
// small shape of each kind, so the rows time the same work.
func TestGemmPeersMatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tb := range []bool{false, true} {
		const m, k, n = 37, 29, 41
		a, c := matrix(rng, m, k, 1), matrix(rng, m, n, 0)
		b := matrix(rng, k, n, 1)
		if tb {
			b = matrix(rng, n, k, 1)
		}
		for _, p := range GemmPeers {
			if p.Enter != nil {
				p.Enter()
			}
			if !p.Gemm(tb, a, b, c) {
				continue
			}
			for i := 0; i < m; i++ {
				for j := 0; j < n; j++ {
					var s, abs float64
					for q := 0; q < k; q++ {
						bv := b.Data[q*b.Stride+j]
						if tb {
							bv = b.Data[j*b.Stride+q]
						}
						prod := float64(a.Data[i*a.Stride+q]) * float64(bv)
						s += prod
						abs += math.Abs(prod)
					}
					if got := float64(c.Data[i*c.Stride+j]); math.Abs(got-s) > 2*float64(k)*abs/(1<<24) {
						t.Fatalf("%s (transB=%t): C[%d,%d] = %v, want %v", p.Name, tb, i, j, got, s)
					}
				}
			}
		}
	}
}
