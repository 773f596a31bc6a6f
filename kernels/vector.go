package kernels

// Axpy sets y[i] += alpha·x[i], BLAS's saxpy: y is updated in place. It
// panics if len(x) != len(y), or if x and y overlap without being the same
// slice.
//
// Each y[i] becomes the IEEE result of y[i] + alpha·x[i] either rounded once
// (fused multiply-add) or with the product rounded first, which one depending
// on the ISA: a finite result is within 2u·(|y[i]| + |alpha·x[i]|) + 2⁻¹⁴⁹ of
// the exact value (u = 2⁻²⁴). Special values are therefore the same on every
// ISA except where alpha·x[i] of finite factors, or the sum, overflows:
// Axpy(1e38, {10}, {−Inf}) gives NaN unfused and −Inf fused.
func Axpy(alpha float32, x, y []float32) {
	axpy(alpha, x, y)
}

// checkAxpyArgs panics unless Axpy's arguments are valid (called first by the
// dispatch of axpy).
func checkAxpyArgs(x, y []float32) {
	if len(x) != len(y) {
		panic(axpyLen{len(x), len(y)})
	}
	if shifted(x, y) {
		panic(aliasError{"Axpy", "y", "x", true})
	}
}

// Sum returns Σ x[i], with error ≤ γₙ·Σ|x[i]| (n = len(x)); +0 for an empty
// slice or one of zeros of either sign. Special values are Dot's for Dot(x, 1…1):
// NaN if an element is NaN or both infinities occur, s·Inf for infinities of
// one sign s; when the finite elements' magnitudes sum beyond MaxFloat32/2 a
// partial sum may overflow, and the result may be NaN, ±Inf or within the
// bound, depending on the ISA and the summation order.
func Sum(x []float32) float32 { return sum(x) }

// Max returns the largest element of x: −Inf for an empty slice, the default
// quiet NaN (bits 0x7FC00000) if any element is NaN, whatever its sign and
// payload, and +0 when the largest elements are zeros of both signs. The same
// bits on every ISA.
func Max(x []float32) float32 {
	if m := maxOf(x); m == m {
		return m
	}
	return defaultNaN()
}
