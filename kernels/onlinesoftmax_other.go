//go:build purego || !(amd64 || arm64)

package kernels

// onlineSoftmax leaves every row to onlineSoftmaxGo (purego builds and
// ISAs without SIMD kernels).
func onlineSoftmax(x []float32, m float32) (float32, float32, int) {
	return 0, 0, softmaxSpecial
}

// onlineSoftmaxBand has no kernel here: OnlineSoftmaxBand takes the rows one
// by one.
func onlineSoftmaxBand(Matrix, int, []float32, []float32) (int, bool) { return 0, false }
