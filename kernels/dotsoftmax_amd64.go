//go:build !purego

package kernels

// dotSoftmaxFarBytes is the span of A beyond which DotSoftmaxMatTVec takes A
// to come from L3 or memory: this core's L2 (1 MiB if cpuid cannot tell).
var dotSoftmaxFarBytes = l2Bytes()

// dotSoftmaxFar reports whether DotSoftmaxMatTVec takes its far kernel (scores
// row by row, no software prefetch) for n rows of stride lda: when they span
// more than dotSoftmaxFarBytes, or are a multiple of 4 KiB apart (they share
// L1 sets, and the near kernel's prefetches would evict the rows it is
// adding). Measured on Zen 4 (1 MiB L2), the near kernel is 8–33% faster
// while A stays in L2 or L3 between calls, and 1.5–2.8× slower when it comes
// from memory; the far kernel runs at the memory's speed there. Beyond L2,
// where A is resident depends on what else runs, so the far kernel, whose
// worst case is milder, is taken. A variable so that tests can force either
// kernel.
var dotSoftmaxFar = func(n, lda int) bool { return n*lda*4 > dotSoftmaxFarBytes || lda%1024 == 0 }

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
