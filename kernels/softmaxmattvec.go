package kernels

// SoftmaxMatTVec sets x to its softmax in place and adds to dst the x-weighted
// sum of the rows of A: with x an attention step's scores and A its values, x
// ends as the weights and dst gains the context. The results are those of
// Softmax(x, x) followed by MatTVec(dst, a, x), bit for bit, with their bounds
// and special values (a NaN score makes every weight and so every element of
// dst NaN; all −Inf gives zero weights and leaves dst unchanged). On amd64 it
// is one kernel: the softmax's passes, then the context pass while x is still
// in L1, saving a call and a reload; elsewhere it is the two kernels in turn.
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
