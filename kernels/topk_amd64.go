//go:build !purego

package kernels

import "math"

// spanMaxima sets dst[j] to the largest element of span j of x (topKSpan
// elements each, len(x) ≥ topKSpan·len(dst)) and reports whether any element
// of those spans is NaN, in which case dst holds no meaningful maxima.
func spanMaxima(dst, x []float32) bool {
	_ = x[:len(dst)*topKSpan] // the kernels do not check len(x)
	switch active {
	case AVX512:
		return spanMaxAVX512(dst, x)
	case AVX2:
		// The AVX2 kernel's flag may be set without a NaN.
		return spanMaxAVX2(dst, x) && hasNaN(x[:len(dst)*topKSpan])
	}
	return spanMaxGo(dst, x)
}

// hasNaN reports whether x holds a NaN: firstAbove finds the first element
// not ≤ +Inf.
func hasNaN(x []float32) bool { return firstAbove(x, float32(math.Inf(1))) < len(x) }

// spanMaxKth is spanMaxima that also returns the k-th largest of the maxima
// (counting equal values), where a kernel takes it in the same pass (AVX-512
// for k ≤ 16, AVX2 for k ≤ 8); ok is false, and nothing done, elsewhere.
func spanMaxKth(dst, x []float32, k int) (kth float32, nan, ok bool) {
	_ = x[:len(dst)*topKSpan] // the kernels do not check len(x)
	switch {
	case active == AVX512 && 1 <= k && k <= 16:
		kth, nan = spanMaxKthAVX512(dst, x, k)
		return kth, nan, true
	case active == AVX2 && 1 <= k && k <= 8:
		kth, nan = spanMaxKthAVX2(dst, x, k)
		return kth, nan && hasNaN(x[:len(dst)*topKSpan]), true
	}
	return 0, false, false
}

// aboveAll stores the indices i of x with !(x[i] ≤ t), in increasing order,
// into dst and returns how many, or −1 if there are more than len(dst).
func aboveAll(dst []int32, x []float32, t float32) int {
	switch active {
	case AVX512:
		return aboveAllAVX512(dst, x, t)
	case AVX2:
		return aboveAllAVX2(dst, x, t)
	}
	return aboveAllGo(dst, x, t)
}

// kthLargest returns the k-th largest element of m, counting equal values:
// m free of NaN, len(m) a positive multiple of topKGroup, 1 ≤ k ≤
// min(len(m), 64). The assembly's work grows as len(m)².
func kthLargest(m []float32, k int) float32 {
	switch active {
	case AVX512:
		return kthLargestAVX512(m, k)
	case AVX2:
		return kthLargestAVX2(m, k)
	}
	return kthLargestGo(m, k)
}

// aboveSpans is aboveAll over every whole span j of x (topKSpan elements
// from j·topKSpan, j < len(x)/topKSpan) with !(bm[j] ≤ t), in increasing
// order of j, and then over the elements after the last whole span, the
// indices relative to x: it stores them into dst and returns how many, or −1
// if there are more than len(dst) (whose contents are then unspecified).
// len(bm) is a multiple of topKGroup, at least len(x)/topKSpan.
func aboveSpans(dst []int32, x []float32, bm []float32, t float32) int {
	switch active {
	case AVX512:
		return aboveSpansAVX512(dst, x, bm, t)
	case AVX2:
		return aboveSpansAVX2(dst, x, bm, t)
	}
	return aboveSpansGo(dst, x, bm, t)
}
