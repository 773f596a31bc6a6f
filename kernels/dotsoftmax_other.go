//go:build purego || !amd64

package kernels

// dotSoftmaxMatTVec is DotSoftmaxMatTVec for len(scores) ≥ 1 and len(ctx) ≥ 1,
// a row at a time.
func dotSoftmaxMatTVec(ctx, scores, a []float32, lda int, h []float32, st *SoftmaxState) bool {
	return dotSoftmaxRows(ctx, scores, a, lda, h, st)
}
