//go:build !purego

package kernels

// onlineSoftmax runs the assembly kernel of the active ISA; the others return
// softmaxSpecial, leaving the row to onlineSoftmaxGo. m is not NaN.
func onlineSoftmax(x []float32, m float32) (float32, float32, int) {
	switch active {
	case AVX512:
		return onlineSoftmaxAVX512(x, m)
	case AVX2:
		return onlineSoftmaxAVX2(x, m)
	}
	return 0, 0, softmaxSpecial
}
