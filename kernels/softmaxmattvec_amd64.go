//go:build !purego

package kernels

// softmaxMatTVec is SoftmaxMatTVec for len(x) ≥ 1 and len(dst) ≥ 1. The AVX2
// kernel needs a full vector of columns, as matTVecAVX2 does; a row whose max
// is not finite or that holds a NaN is finished by the Go softmax and then
// given its context.
func softmaxMatTVec(dst, a []float32, lda int, x []float32) {
	var st int
	switch {
	case active == AVX512:
		st = softmaxMatTVecAVX512(dst, a, lda, x)
	case active == AVX2 && len(dst) >= 8:
		st = softmaxMatTVecAVX2(dst, a, lda, x)
	default:
		softmax(x, x)
		matTVec(dst, a, lda, x)
		return
	}
	if st != softmaxDone {
		softmaxFinish(st, x, x)
		matTVec(dst, a, lda, x)
	}
}
