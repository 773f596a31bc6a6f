//go:build !purego

package kernels

// spanMaxima sets dst[j] to the largest element of span j of x (topKSpan
// elements each, len(x) ≥ topKSpan·len(dst)) and reports whether any element
// of those spans is NaN, in which case dst holds no meaningful maxima.
func spanMaxima(dst, x []float32) bool {
	_ = x[:len(dst)*topKSpan] // the kernels do not check len(x)
	switch active {
	case AVX512:
		return spanMaxAVX512(dst, x)
	case AVX2:
		return spanMaxAVX2(dst, x)
	}
	return spanMaxGo(dst, x)
}
