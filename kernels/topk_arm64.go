//go:build !purego

package kernels

// spanMaxima sets dst[j] to the largest element of span j of x (topKSpan
// elements each, len(x) ≥ topKSpan·len(dst)) and reports whether any element
// of those spans is NaN, in which case dst holds no meaningful maxima.
func spanMaxima(dst, x []float32) bool {
	_ = x[:len(dst)*topKSpan] // the kernel does not check len(x)
	if active == NEON {
		return spanMaxNEON(dst, x)
	}
	return spanMaxGo(dst, x)
}
