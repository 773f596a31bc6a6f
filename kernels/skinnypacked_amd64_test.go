//go:build !purego

package kernels

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/heedml/heed/internal/allocs"
)

// TestGemmPackedSkinny runs GemmPacked's skinny route (every product of at
// most skinnyMaxRows rows of A as is) for m = 1 … 33 (33 takes the blocked
// route) against checkGemm's bound: one group and several, a
// last panel of every width, k from one step to several passes (the
// micro-kernel's kc and kc = 16), α and β (β = 0 over a NaN C), strides
// beyond the columns, the operand as the leading block of a larger one,
// prefetching into L1 and L2, under every ISA; then TestGemmScalars and the
// guard pages through the route.
func TestGemmPackedSkinny(t *testing.T) {
	defer func(r route) { rt = r }(rt)
	defer func() { gemmUnderTest = Gemm }()
	var s GemmScratch
	var p PackedB
	withSkinny(t, func(t *testing.T) {
		for _, kc := range []int{0, 16} {
			for _, l2 := range []bool{false, true} {
				rt.pfL2 = l2
				name := fmt.Sprintf("kc=%d/pfL2=%v", kc, l2)
				t.Run(name, func(t *testing.T) {
					rng := rand.New(rand.NewPCG(51, uint64(kc)))
					forEachISA(t, func(t *testing.T) {
						if mk := gemmMicroFor(Active()); mk != nil && kc > 0 {
							saved := *mk
							defer func() { *mk = saved }()
							mk.kc = kc
						}
						i := 0
						for m := 1; m <= skinnyMaxRows+1; m++ {
							for _, n := range []int{1, 15, 64, 65, 200} {
								for _, k := range []int{1, 7, 70, 301} {
									if testing.Short() && (m+n+k)%3 != 0 {
										continue
									}
									i++
									gemmUnderTest = packedGemm(&s, &p, i%2*5)
									alpha := []float32{1, -0.5}[i%2]
									beta := []float32{0, 0.5, 1}[i%3]
									checkGemm(t, rng, gemmCase{false, i%4 >= 2, m, n, k, alpha, beta, i % 3, i % 5})
								}
							}
						}
					})
				})
			}
		}
		gemmUnderTest = packedGemm(&s, &p, 0)
		t.Run("scalars", TestGemmScalars)
		gemmGuard(t, packedGemm(&s, &p, 0))
		gemmGuard(t, packedGemm(nil, &p, 0))
	})
}

// TestSkinnyPackedRoute checks which products GemmPacked's skinny route
// takes.
func TestSkinnyPackedRoute(t *testing.T) {
	packed := make([]float32, 1)
	for _, c := range []struct {
		m, k, n        int
		transA, banded bool
		micro          *gemmMicro
		packed         []float32
		want           bool
	}{
		{8, 512, 32000, false, false, gemmAVX512, packed, true},
		{32, 512, 32000, false, false, gemmAVX2, packed, true},
		{33, 512, 32000, false, false, gemmAVX512, packed, false},  // too many rows
		{1, 1, 1, false, false, gemmAVX512, packed, true},          // any size
		{8, 512, 32000, true, false, gemmAVX512, packed, false},    // A transposed
		{8, 512, 32000, false, true, gemmAVX512, packed, false},    // banded
		{8, 512, 32000, false, false, gemmAVX512, nil, false},      // B referred to, not packed
		{8, 512, 32000, false, false, &gemmMicro{}, packed, false}, // no kernels
	} {
		g := gemmOp{m: c.m, k: c.k, n: c.n, transA: c.transA, banded: c.banded, micro: c.micro}
		if got := g.skinnyPacked(c.packed); got != c.want {
			t.Errorf("m=%d k=%d n=%d transA=%v banded=%v packed=%v: skinnyPacked = %v, want %v",
				c.m, c.k, c.n, c.transA, c.banded, c.packed != nil, got, c.want)
		}
	}
}

// TestSkinnyPackedLines checks the prefetch shares of the skinny route's
// groups: together they cover the next pass.
func TestSkinnyPackedLines(t *testing.T) {
	for _, c := range []struct{ kb, nr, groups, lps, share int }{
		{512, 64, 1, 4, 2048},
		{512, 64, 2, 2, 1024},
		{512, 64, 3, 2, 683}, // ⌈683/512⌉
		{512, 64, 4, 1, 512},
		{512, 64, 6, 1, 342},
		{512, 16, 1, 1, 512},
		{512, 16, 6, 1, 86},
		{3, 64, 1, 4, 12},
	} {
		lps, share := skinnyPackedLines(c.kb, c.nr, c.groups)
		if lps != c.lps || share != c.share {
			t.Errorf("skinnyPackedLines(%d, %d, %d) = %d, %d; want %d, %d", c.kb, c.nr, c.groups, lps, share, c.lps, c.share)
		}
		if lps*c.kb < share || share*c.groups < c.kb*c.nr/16 {
			t.Errorf("skinnyPackedLines(%d, %d, %d): %d lines a step over %d steps do not cover a share of %d, or the shares the pass", c.kb, c.nr, c.groups, lps, c.kb, share)
		}
	}
}

// TestGemmPackedSkinnySplit runs the skinny route through GemmPacked's split
// over goroutines (each part a block of C's columns, or of its rows and
// columns, with its share of the panels) and checks that neither GemmPacked
// nor GemmScratch.GemmPacked allocates once warm.
func TestGemmPackedSkinnySplit(t *testing.T) {
	skipSparse(t)
	prev := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(prev)
	defer func() { gemmUnderTest = Gemm }()
	rng := rand.New(rand.NewPCG(53, 54))
	var s GemmScratch
	var p PackedB
	withSkinny(t, func(t *testing.T) {
		forEachISA(t, func(t *testing.T) {
			for _, m := range []int{5, 13, 32} {
				n, k := 2*gemmParallelWork/(m*300)+77, 300
				if parts := gemmParts(m, n, k); parts < 2 {
					t.Fatalf("m=%d n=%d k=%d: %d parts, want a split", m, n, k, parts)
				}
				gemmUnderTest = packedGemm(nil, &p, 0)
				checkGemm(t, rng, gemmCase{false, true, m, n, k, 1, 0.5, 1, 2})
				a, _ := testMatrix(rng, m, k, 0, 0, 0, 0)
				b, _ := testMatrix(rng, n, k, 0, 0, 0, 0)
				c, _ := testMatrix(rng, m, n, 0, 0, 0, 0)
				p.Pack(Trans, b)
				for _, f := range []struct {
					name string
					run  func()
				}{
					{"GemmPacked", func() { GemmPacked(NoTrans, 1, a, &p, 0.5, c) }},
					{"GemmScratch.GemmPacked", func() { s.GemmPacked(NoTrans, 1, a, &p, 0.5, c) }},
				} {
					f.run()
					if got := allocs.Count(gemmAllocRuns(), f.run); got != 0 {
						t.Errorf("m=%d: %s allocates %d times in the measured calls", m, f.name, got)
					}
				}
			}
		})
	})
}

// TestGemmSkinnyStrided runs the strided skinny route (B as is and in cache:
// Gemm(NoTrans, NoTrans) below skinnyBytes, and PackedB.Ref) for m = 1 … 33
// (33 takes the blocked route) against checkGemm's bound: whole panels read
// in place and a partial last one packed, k over one pass and several (the
// micro-kernel's kc and kc = 16), α and β (β = 0 over a NaN C), strides
// beyond the columns, under every ISA.
func TestGemmSkinnyStrided(t *testing.T) {
	defer func() { gemmUnderTest = Gemm }()
	var s GemmScratch
	var p PackedB
	for _, kc := range []int{0, 16} {
		for _, ref := range []bool{false, true} {
			t.Run(fmt.Sprintf("kc=%d/ref=%v", kc, ref), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(55, uint64(kc)))
				forEachISA(t, func(t *testing.T) {
					if mk := gemmMicroFor(Active()); mk != nil && kc > 0 {
						saved := *mk
						defer func() { *mk = saved }()
						mk.kc = kc
					}
					gemmUnderTest = Gemm
					if ref {
						gemmUnderTest = packedGemmRef(&s, &p, 0, true)
					}
					i := 0
					for m := 1; m <= skinnyMaxRows+1; m++ {
						for _, n := range []int{1, 15, 64, 65, 200} {
							for _, k := range []int{1, 7, 70, 301} {
								if testing.Short() && (m+n+k)%3 != 0 {
									continue
								}
								i++
								alpha := []float32{1, -0.5}[i%2]
								beta := []float32{0, 0.5, 1}[i%3]
								checkGemm(t, rng, gemmCase{false, false, m, n, k, alpha, beta, i % 3, i % 5})
							}
						}
					}
				})
			})
		}
	}
}

// TestSkinnyStridedRoute checks which products the strided skinny route
// takes.
func TestSkinnyStridedRoute(t *testing.T) {
	defer func(b int) { skinnyBytes = b }(skinnyBytes)
	skinnyBytes = 1 << 20
	packed := make([]float32, 1)
	for _, c := range []struct {
		m, k, n, ldb           int
		transA, transB, banded bool
		micro                  *gemmMicro
		packed                 []float32
		want                   bool
	}{
		{8, 512, 512, 512, false, false, false, gemmAVX512, nil, true},
		{32, 512, 512, 512, false, false, false, gemmAVX2, nil, true},
		{33, 512, 512, 512, false, false, false, gemmAVX512, nil, false},   // too many rows
		{8, 512, 513, 513, false, false, false, gemmAVX512, nil, false},    // beyond skinnyBytes
		{8, 256, 256, 1024, false, false, false, gemmAVX512, nil, true},    // its span, at stride ldb
		{8, 512, 512, 512, true, false, false, gemmAVX512, nil, false},     // A transposed
		{8, 512, 512, 512, false, true, false, gemmAVX512, nil, false},     // B transposed
		{8, 512, 512, 512, false, false, true, gemmAVX512, nil, false},     // banded
		{8, 512, 512, 512, false, false, false, gemmAVX512, packed, false}, // packed: the packed route
		{8, 512, 512, 512, false, false, false, &gemmMicro{}, nil, false},  // no kernels
	} {
		g := gemmOp{m: c.m, k: c.k, n: c.n, ldb: c.ldb, transA: c.transA, transB: c.transB, banded: c.banded, micro: c.micro}
		if got := g.skinnyStrided(c.packed); got != c.want {
			t.Errorf("m=%d k=%d n=%d ldb=%d transA=%v transB=%v banded=%v packed=%v: skinnyStrided = %v, want %v",
				c.m, c.k, c.n, c.ldb, c.transA, c.transB, c.banded, c.packed != nil, got, c.want)
		}
	}
}
