//go:build !purego

package kernels

// dotSoftmaxFar reports whether DotSoftmaxMatTVec takes its kernel for A
// streaming from memory (scores row by row, no software prefetch) for n rows
// of stride lda: when they span more than 8 MiB, which the L3 of a shared
// processor cannot be relied on to hold, or are a multiple of 4 KiB apart
// (the other kernel's prefetches would evict the rows it is adding). Below
// that A is taken to be in L2 or L3, where the interleaved rows with software
// prefetch are faster. A variable so that tests can force either kernel.
var dotSoftmaxFar = func(n, lda int) bool { return n*lda > 2<<20 || lda%1024 == 0 }

// dotSoftmaxMatTVec is DotSoftmaxMatTVec for len(scores) ≥ 1 and len(ctx) ≥ 1:
// the kernel for the whole blocks of eight rows when the columns are whole
// vectors, dotSoftmaxRows for the rest.
func dotSoftmaxMatTVec(ctx, scores, a []float32, lda int, h []float32, st *SoftmaxState) bool {
	n := 0
	if (active == AVX2 || active == AVX512) && len(ctx)%8 == 0 {
		n = len(scores) &^ 7
		if n > 0 {
			kernel := dotSoftmaxMatTVecAVX2
			switch far := dotSoftmaxFar(n, lda); {
			case active == AVX512 && far:
				kernel = dotSoftmaxMatTVecFarAVX512
			case active == AVX512:
				kernel = dotSoftmaxMatTVecAVX512
			case far:
				kernel = dotSoftmaxMatTVecFarAVX2
			}
			var r int
			st.Max, st.Sum, r = kernel(ctx, scores[:n], a, lda, h, st.Max, st.Sum)
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
