//go:build !purego

package kernels

// onlineSoftmax is two NEON passes: Max (NaN when x holds one), then, for a
// finite m' = max(m, max x), Softmax's exp pass (expShiftSumNEON: x − m' and
// Exp, summed). Other rows and ISAs return softmaxSpecial, leaving the row to
// onlineSoftmaxGo. m is not NaN.
func onlineSoftmax(x []float32, m float32) (float32, float32, int) {
	if active != NEON {
		return 0, 0, softmaxSpecial
	}
	mx := max(m, Max(x))
	if mx-mx != 0 { // ±Inf or NaN
		return 0, 0, softmaxSpecial
	}
	return mx, expShiftSumNEON(x, x, mx), softmaxDone
}

// onlineSoftmaxBand has no kernel here: OnlineSoftmaxBand takes the rows one
// by one.
func onlineSoftmaxBand(Matrix, int, []float32, []float32) (int, bool) { return 0, false }
