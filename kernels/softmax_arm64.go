//go:build !purego

package kernels

import "github.com/heedml/heed/fallback"

// softmax takes the NEON passes when the maximum is finite; a NaN, a +Inf or
// an all −Inf row (and the empty one) go to fallback, which defines their
// special values.
func softmax(dst, x []float32) {
	if active == NEON {
		if m := maxOfNEON(x); m-m == 0 {
			scaleNEON(1/expShiftSumNEON(dst, x, m), dst)
			return
		}
	}
	fallback.Softmax(dst, x)
}
