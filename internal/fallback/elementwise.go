package fallback

// The element-wise kernels: each reads x (and y) at i and writes dst[i], in
// increasing i, so dst may be x or y; every slice is at least len(x) long.

// ScaleTo sets dst[i] = alpha·x[i].
func ScaleTo(dst []float32, alpha float32, x []float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = alpha * v
	}
}

// AxpyTo sets dst[i] = alpha·x[i] + y[i], with one rounding (fused).
func AxpyTo(dst []float32, alpha float32, x, y []float32) {
	dst, y = dst[:len(x)], y[:len(x)]
	for i, v := range x {
		dst[i] = fma32(alpha, v, y[i])
	}
}

// AddConstTo sets dst[i] = x[i] + c.
func AddConstTo(dst []float32, c float32, x []float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = v + c
	}
}

// Add sets dst[i] = x[i] + y[i].
func Add(dst, x, y []float32) {
	dst, y = dst[:len(x)], y[:len(x)]
	for i, v := range x {
		dst[i] = v + y[i]
	}
}

// Sub sets dst[i] = x[i] − y[i].
func Sub(dst, x, y []float32) {
	dst, y = dst[:len(x)], y[:len(x)]
	for i, v := range x {
		dst[i] = v - y[i]
	}
}

// Mul sets dst[i] = x[i]·y[i].
func Mul(dst, x, y []float32) {
	dst, y = dst[:len(x)], y[:len(x)]
	for i, v := range x {
		dst[i] = v * y[i]
	}
}

// Div sets dst[i] = x[i]/y[i].
func Div(dst, x, y []float32) {
	dst, y = dst[:len(x)], y[:len(x)]
	for i, v := range x {
		dst[i] = v / y[i]
	}
}

// DotInc returns Σ x[ix + k·incX]·y[iy + k·incY] over k < n, summed in
// increasing k (the strided form behind BLAS's sdot, whose negative
// increments the caller maps to start indices ix, iy).
func DotInc(x, y []float32, n, incX, incY, ix, iy int) float32 {
	var s float32
	for k := 0; k < n; k++ {
		s += x[ix] * y[iy]
		ix += incX
		iy += incY
	}
	return s
}

// AxpyInc sets y[iy + k·incY] += alpha·x[ix + k·incX] for k < n.
func AxpyInc(alpha float32, x, y []float32, n, incX, incY, ix, iy int) {
	for k := 0; k < n; k++ {
		y[iy] += alpha * x[ix]
		ix += incX
		iy += incY
	}
}
