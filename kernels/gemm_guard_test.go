//go:build unix

package kernels

import (
	"math"
	"testing"
)

// TestGemmGuard places A, B and C flush against PROT_NONE pages, at both ends,
// with shapes that leave partial tiles in every dimension and partial 8×8
// blocks of the transposing pack of Bᵀ (k = 8, 13): a read or write
// outside the matrices crashes the test.
func TestGemmGuard(t *testing.T) { gemmGuard(t, Gemm) }

// gemmGuard is TestGemmGuard's body with the product under test.
func gemmGuard(t *testing.T, gemm func(tA, tB Transpose, alpha float32, a, b Matrix, beta float32, c Matrix)) {
	mr, nr := gemmTileSizes()
	const maxN = 4 * 64 * 64
	ga, gb, gc := newGuard(t, maxN), newGuard(t, maxN), newGuard(t, maxN)
	forEachISA(t, func(t *testing.T) {
		for _, m := range []int{1, mr - 1, mr + 1, 2*mr + 3, skinnyMaxRows + 1} { // the last past the skinny routes
			for _, n := range []int{1, nr - 1, nr + 3, 2*nr - 5} {
				for _, k := range []int{1, 3, 6, 8, 13} {
					for _, ta := range []bool{false, true} {
						for _, tb := range []bool{false, true} {
							for _, atEnd := range []bool{false, true} {
								ar, ac := m, k
								if ta {
									ar, ac = k, m
								}
								br, bc := k, n
								if tb {
									br, bc = n, k
								}
								a := Matrix{Rows: ar, Cols: ac, Stride: ac, Data: ga.at(ar*ac, atEnd)}
								b := Matrix{Rows: br, Cols: bc, Stride: bc, Data: gb.at(br*bc, atEnd)}
								c := Matrix{Rows: m, Cols: n, Stride: n, Data: gc.at(m*n, atEnd)}
								for i := range a.Data {
									a.Data[i] = float32(i%7) - 3
								}
								for i := range b.Data {
									b.Data[i] = float32(i%5) - 2
								}
								for i := range c.Data {
									c.Data[i] = 1
								}
								gemm(tr(ta), tr(tb), 1, a, b, 1, c)
								// C[0,0] = 1 + Σₚ op(A)[0,p]·op(B)[p,0], exact in float32.
								want := 1.0
								for p := 0; p < k; p++ {
									want += float64(opAt(a, ta, 0, p)) * float64(opAt(b, tb, p, 0))
								}
								if got := c.Data[0]; float64(got) != want || math.IsNaN(float64(got)) {
									t.Fatalf("m=%d n=%d k=%d ta=%t tb=%t: C[0,0] = %v, want %v", m, n, k, ta, tb, got, want)
								}
							}
						}
					}
				}
			}
		}
	})
}
