//go:build purego || !amd64

package kernels

// aboveAll stores the indices i of x with !(x[i] ≤ t), in increasing order,
// into dst and returns how many, or −1 if there are more than len(dst).
func aboveAll(dst []int32, x []float32, t float32) int { return aboveAllGo(dst, x, t) }

// kthLargest returns the k-th largest element of m, counting equal values:
// m free of NaN, len(m) a positive multiple of topKGroup, 1 ≤ k ≤
// min(len(m), 64).
func kthLargest(m []float32, k int) float32 { return kthLargestGo(m, k) }

// aboveSpans is aboveAll over every whole span j of x (topKSpan elements
// from j·topKSpan, j < len(x)/topKSpan) with !(bm[j] ≤ t), in increasing
// order of j, and then over the elements after the last whole span, the
// indices relative to x: it stores them into dst and returns how many, or −1
// if there are more than len(dst) (whose contents are then unspecified).
// len(bm) is a multiple of topKGroup, at least len(x)/topKSpan.
func aboveSpans(dst []int32, x []float32, bm []float32, t float32) int {
	return aboveSpansGo(dst, x, bm, t)
}

// spanMaxKth is spanMaxima that also returns the k-th largest of the maxima,
// where a kernel takes it in the same pass; here ok is false, and nothing
// done.
func spanMaxKth(dst, x []float32, k int) (kth float32, nan, ok bool) { return 0, false, false }
