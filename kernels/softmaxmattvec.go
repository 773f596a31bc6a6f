package kernels

// SoftmaxMatTVec sets x to its softmax in place and adds to dst the x-weighted
// sum of the rows of A: with x an attention step's scores and A its values, x
// ends as the weights and dst gains the context. It computes what Softmax(x, x)
// followed by MatTVec(dst, a, x) computes, in one kernel on amd64 (elsewhere it
// is those two calls).
//
// For A of at most 64 columns on AVX2, 128 on AVX-512, the kernel makes one
// pass after the max: the exponentials of eight scores at a time, each row of
// A added at once to the columns held in registers, and at the end the weights
// and the context scaled by 1/Σ. There the weights keep Softmax's bounds but
// may differ from its result in the last place (the sum runs in another
// order), and dst[c] is within γₙ₊₂·(|dst[c]| + Σᵣ|x[r]·A[r,c]|) of
// dst[c] + Σᵣ x[r]·A[r,c] for the weights x returned, one rounding more than
// MatTVec's bound. Wider A gives Softmax's and MatTVec's results bit for bit.
// Special values are theirs on every path: a NaN score makes every weight, and
// so dst, NaN; an all −Inf row gives zero weights and leaves dst unchanged;
// +Inf scores share the weight 1.
//
// It panics unless len(dst) = a.Cols and len(x) = a.Rows. dst must not
// overlap x or a.Data, nor x a.Data.
func SoftmaxMatTVec(dst []float32, a Matrix, x []float32) {
	a.check("SoftmaxMatTVec", "a")
	if len(dst) != a.Cols || len(x) != a.Rows {
		panicf("SoftmaxMatTVec: a is %d×%d but len(dst)=%d, len(x)=%d", a.Rows, a.Cols, len(dst), len(x))
	}
	if a.Rows == 0 {
		return
	}
	if a.Cols == 0 {
		softmax(x, x)
		return
	}
	softmaxMatTVec(dst, a.Data, a.Stride, x)
}
