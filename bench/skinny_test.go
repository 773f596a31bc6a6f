//go:build amd64 && !purego

package bench

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/heedml/heed/kernels"
)

// BenchmarkSkinnyPeers times the skinny products of a decode step's output
// projection: B = 1…32 rows against a 32000×512 matrix (65.5 MB, two of them
// used in turn so that each call reads its matrix from memory), as X·Aᵀ
// (nt: heed's Gemm(NoTrans, Trans) and MatVecBatch, B = 1 also MatVec) and
// X·W with W 512×32000 (nn: Gemm(NoTrans, NoTrans)), for heed under each ISA
// and each GEMM peer of this build (gonum; OpenBLAS with -tags heedcgo,
// cblas_sgemm), and at B = 1 their matrix-vector products (blas32.Gemv,
// cblas_sgemv). Run it with GOMAXPROCS=1 and OPENBLAS_NUM_THREADS=1. It
// reports GB/s of the matrix's bytes, GFLOP/s (2·B·N·K per call) and
// "of-roofline": the roofline time max(bytes/BW, flops/FMA peak) over the
// time taken, with the FMA peak measured by MeasureCeilings in the same
// process and BW the streaming bandwidth from memory measured around the row
// (memNow, reported as mem-GB/s).
func BenchmarkSkinnyPeers(b *testing.B) {
	const n, k, m = 32000, 512, 2
	c := memCeilings()
	peak := c.GFlops
	b.Logf("ceilings: memory %.1f GB/s at the start, FMA peak %.1f GFLOP/s (%s)", c.Levels[len(c.Levels)-1].GBs, peak, c.FMA)
	rng := rand.New(rand.NewPCG(5, 6))
	as, ws := make([]kernels.Matrix, m), make([]kernels.Matrix, m)
	for i := range as {
		as[i], ws[i] = matrix(rng, n, k, 1), matrix(rng, k, n, 1)
	}
	type peer struct {
		name string
		isa  kernels.ISA
		run  func(nt bool, x, a, d kernels.Matrix) bool
	}
	var peers []peer
	for _, isa := range kernels.Supported() {
		if isa == kernels.Generic {
			continue
		}
		peers = append(peers, peer{"heed-" + isa.String(), isa, GemmPeers[0].Gemm},
			peer{"heed-matvecbatch-" + isa.String(), isa, func(nt bool, x, a, d kernels.Matrix) bool {
				if nt {
					kernels.MatVecBatch(d, a, x)
				}
				return nt
			}},
			peer{"heed-matvec-" + isa.String(), isa, func(nt bool, x, a, d kernels.Matrix) bool {
				if nt && x.Rows == 1 {
					kernels.MatVec(d.Row(0), a, x.Row(0))
				}
				return nt && x.Rows == 1
			}})
	}
	for _, p := range GemmPeers[1:] {
		if p.Name == "vek" {
			continue // in-cache GEMM: not a skinny peer
		}
		enter, gemm := p.Enter, p.Gemm
		peers = append(peers, peer{p.Name, kernels.Active(), func(nt bool, x, a, d kernels.Matrix) bool {
			if enter != nil {
				enter()
			}
			return gemm(nt, x, a, d)
		}})
	}
	for _, im := range Impls() {
		if im.Name != "openblas" && im.Name != "gonum" || im.MatVec == nil {
			continue
		}
		enter, mv := im.Enter, im.MatVec
		peers = append(peers, peer{im.Name + "-matvec", kernels.Active(), func(nt bool, x, a, d kernels.Matrix) bool {
			if !nt || x.Rows != 1 {
				return false
			}
			if enter != nil {
				enter()
			}
			mv(d.Row(0), a, x.Row(0))
			return true
		}})
	}
	prev := kernels.Active()
	defer kernels.Use(prev)
	for _, bt := range []int{1, 2, 4, 8, 16, 32} {
		x := matrix(rng, bt, k, 1)
		d := matrix(rng, bt, n, 0)
		bytes := float64(4 * n * k)
		flops := 2 * float64(bt) * float64(n) * float64(k)
		for _, nt := range []bool{true, false} {
			layout := "nn"
			mats := ws
			if nt {
				layout, mats = "nt", as
			}
			for _, p := range peers {
				b.Run(fmt.Sprintf("B=%d/%s/%s", bt, layout, p.name), func(b *testing.B) {
					kernels.Use(p.isa)
					if !p.run(nt, x, mats[0], d) {
						b.Skip("not this layout")
					}
					i := 0
					bw := memNow()
					b.ResetTimer()
					for range b.N {
						p.run(nt, x, mats[i], d)
						i = (i + 1) % m
					}
					b.StopTimer()
					bw = max(bw, memNow())
					ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
					b.ReportMetric(bytes/ns, "GB/s")
					b.ReportMetric(flops/ns, "GFLOP/s")
					b.ReportMetric(bw, "mem-GB/s")
					b.ReportMetric(max(bytes/bw, flops/peak)/ns, "of-roofline")
				})
			}
		}
	}
}
