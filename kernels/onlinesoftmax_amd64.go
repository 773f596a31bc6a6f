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

// onlineSoftmaxBand runs the band kernel of the active ISA and returns how
// many rows it left marked (sum NaN) and true; other ISAs return false.
// d is within [−x.Rows, x.Cols] and x.Cols > 0.
func onlineSoftmaxBand(x Matrix, d int, m, sum []float32) (int, bool) {
	switch active {
	case AVX512:
		return onlineSoftmaxBandAVX512(x.Data, x.Rows, x.Cols, x.Stride, d, m, sum), true
	case AVX2:
		return onlineSoftmaxBandAVX2(x.Data, x.Rows, x.Cols, x.Stride, d, m, sum), true
	}
	return 0, false
}
