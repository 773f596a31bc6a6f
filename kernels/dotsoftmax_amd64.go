//go:build !purego

package kernels

// dotSoftmaxMatTVec is DotSoftmaxMatTVec for len(scores) ≥ 1 and len(ctx) ≥ 1:
// the kernel for the whole blocks of eight rows when the columns are whole
// vectors, dotSoftmaxRows for the rest.
func dotSoftmaxMatTVec(ctx, scores, a []float32, lda int, h []float32, st *SoftmaxState) bool {
	n := 0
	if (active == AVX2 || active == AVX512) && len(ctx)%8 == 0 {
		n = len(scores) &^ 7
		if n > 0 {
			var r int
			if active == AVX512 {
				st.Max, st.Sum, r = dotSoftmaxMatTVecAVX512(ctx, scores[:n], a, lda, h, st.Max, st.Sum)
			} else {
				st.Max, st.Sum, r = dotSoftmaxMatTVecAVX2(ctx, scores[:n], a, lda, h, st.Max, st.Sum)
			}
			if r != 0 {
				return false
			}
		}
		if n == len(scores) {
			return true
		}
	}
	return dotSoftmaxRows(ctx, scores[n:], a[n*lda:], lda, h, st)
}
