//go:build heedtrial && amd64 && !purego

package kernels

import (
	"math/rand/v2"
	"runtime"
	"sort"
	"testing"
)

// TestAdditiveScoreBackwardTrial compares the rows per block of the additive
// backward (the default kernels and the trial ones, generated with
// go run . -trial in asmgen): each variant first gives the default's bits,
// then, for each shape, the variants run interleaved, one call each per
// round, and the log gives each one's median thread CPU time per call, with
// the forward AdditiveScore beside them (* marks the defaults).
//
//	go test -tags heedtrial -run AdditiveScoreBackwardTrial -v ./kernels
func TestAdditiveScoreBackwardTrial(t *testing.T) {
	type kern = func(dq, dv, dk []float32, lddk int, k []float32, ldk int, q, v, ds []float32)
	noDK := func(f func(dq, dv, k []float32, ldk int, q, v, ds []float32)) kern {
		return func(dq, dv, _ []float32, _ int, k []float32, ldk int, q, v, ds []float32) {
			f(dq, dv, k, ldk, q, v, ds)
		}
	}
	variants := []struct {
		name string
		dk   bool
		f    kern
	}{
		{"avx512 dk R1", true, additiveScoreBackwardR1AVX512},
		{"avx512 dk R2", true, additiveScoreBackwardR2AVX512},
		{"avx512 dk R3*", true, additiveScoreBackwardAVX512},
		{"avx512 nodk R1", false, noDK(additiveScoreBackwardNoDKR1AVX512)},
		{"avx512 nodk R2", false, noDK(additiveScoreBackwardNoDKR2AVX512)},
		{"avx512 nodk R3*", false, noDK(additiveScoreBackwardNoDKAVX512)},
		{"avx512 nodk R4", false, noDK(additiveScoreBackwardNoDKR4AVX512)},
		{"avx2 dk R1", true, additiveScoreBackwardR1AVX2},
		{"avx2 dk R2", true, additiveScoreBackwardR2AVX2},
		{"avx2 dk R3*", true, additiveScoreBackwardAVX2},
		{"avx2 nodk R1", false, noDK(additiveScoreBackwardNoDKR1AVX2)},
		{"avx2 nodk R2", false, noDK(additiveScoreBackwardNoDKR2AVX2)},
		{"avx2 nodk R3*", false, noDK(additiveScoreBackwardNoDKAVX2)},
	}
	if !hasAVX512() {
		variants = variants[7:]
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sh := range [][2]int{{64, 256}, {1024, 256}, {4096, 256}, {1024, 64}} {
		S, d := sh[0], sh[1]
		k := Matrix{Rows: S, Cols: d, Stride: d, Data: make([]float32, S*d)}
		q, v, ds := make([]float32, d), make([]float32, d), make([]float32, S)
		fill(rng, k.Data)
		fill(rng, q)
		fill(rng, v)
		fill(rng, ds)
		ds[1] = 0
		// Bits: every variant against fallback.
		for _, x := range variants {
			g := additiveGrads{dq: make([]float32, d), dv: make([]float32, d)}
			if x.dk {
				g.dk = Matrix{Rows: S, Cols: d, Stride: d, Data: make([]float32, S*d)}
			}
			before := g.clone()
			var dkd []float32
			if x.dk {
				dkd = g.dk.Data
			}
			x.f(g.dq, g.dv, dkd, d, k.Data, d, q, v, ds)
			checkAdditiveBackward(t, x.name, g, before, k, q, v, ds)
		}
		dq, dv, dk, sc := make([]float32, d), make([]float32, d), make([]float32, S*d), make([]float32, S)
		times := make([][]int64, len(variants)+1)
		runtime.LockOSThread()
		for r := 0; r < 61; r++ {
			for i := range times {
				t0 := threadCPU()
				if i == len(variants) {
					additiveScore(sc, k.Data, d, q, v)
				} else {
					variants[i].f(dq, dv, dk, d, k.Data, d, q, v, ds)
				}
				times[i] = append(times[i], threadCPU()-t0)
			}
		}
		runtime.UnlockOSThread()
		med := func(x []int64) int64 {
			sort.Slice(x, func(a, b int) bool { return x[a] < x[b] })
			return x[len(x)/2]
		}
		for i, x := range variants {
			t.Logf("S=%4d d=%3d %-16s %8.1f µs", S, d, x.name, float64(med(times[i]))/1e3)
		}
		t.Logf("S=%4d d=%3d %-16s %8.1f µs (the active ISA's AdditiveScore)", S, d, "forward", float64(med(times[len(variants)]))/1e3)
	}
}

func hasAVX512() bool {
	for _, isa := range Supported() {
		if isa == AVX512 {
			return true
		}
	}
	return false
}
