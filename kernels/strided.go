package kernels

import "github.com/heedml/heed/internal/fallback"

// DotInc returns Σₖ x[k·incX]·y[k·incY] over k < n with BLAS's strided
// addressing (sdot): for a negative increment the vector is walked from its
// end, element k being x[(n−1−k)·|incX|]. It panics if n < 0, if an
// increment is 0, or if a slice is shorter than 1 + (n−1)·|inc| (for n > 0).
// The error bound is Dot's, γₙ·Σ|xᵢ·yᵢ|; unit increments call Dot.
func DotInc(n int, x []float32, incX int, y []float32, incY int) float32 {
	ix, iy := checkInc("DotInc", n, len(x), incX, len(y), incY)
	if n == 0 {
		return 0
	}
	if incX == 1 && incY == 1 {
		return Dot(x[:n], y[:n])
	}
	return fallback.DotInc(x, y, n, incX, incY, ix, iy)
}

// AxpyInc sets y[k·incY] += alpha·x[k·incX] for k < n with BLAS's strided
// addressing (saxpy; see DotInc for negative increments and the panics).
// x and y must not overlap unless they are the same slice with the same
// increment. Unit increments call Axpy.
func AxpyInc(n int, alpha float32, x []float32, incX int, y []float32, incY int) {
	ix, iy := checkInc("AxpyInc", n, len(x), incX, len(y), incY)
	if n == 0 {
		return
	}
	if incX == 1 && incY == 1 {
		Axpy(alpha, x[:n], y[:n])
		return
	}
	fallback.AxpyInc(alpha, x, y, n, incX, incY, ix, iy)
}

// checkInc validates BLAS-style strided vectors and returns the indices of
// their first elements.
func checkInc(kernel string, n, lx, incX, ly, incY int) (ix, iy int) {
	switch {
	case n < 0:
		panicf("%s: n=%d < 0", kernel, n)
	case incX == 0 || incY == 0:
		panicf("%s: incX=%d, incY=%d; want nonzero increments", kernel, incX, incY)
	case n == 0:
		return 0, 0
	}
	// fits reports whether 1 + (n−1)·|inc| ≤ l, without overflow.
	fits := func(l, inc int) bool {
		if inc < 0 {
			inc = -inc
		}
		return l >= 1 && (n == 1 || inc <= (l-1)/(n-1))
	}
	if !fits(lx, incX) || !fits(ly, incY) {
		panicf("%s: n=%d, incX=%d, incY=%d need len(x), len(y) ≥ 1 + (n−1)·|inc|; have %d, %d", kernel, n, incX, incY, lx, ly)
	}
	if incX < 0 {
		ix = (1 - n) * incX
	}
	if incY < 0 {
		iy = (1 - n) * incY
	}
	return ix, iy
}
