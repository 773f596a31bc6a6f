//go:build purego || !amd64

package kernels

// softmaxMatTVec is Softmax(x, x) then MatTVec(dst, A, x): the two kernels in
// turn where no fused one exists.
func softmaxMatTVec(dst, a []float32, lda int, x []float32) {
	softmax(x, x)
	matTVec(dst, a, lda, x)
}
