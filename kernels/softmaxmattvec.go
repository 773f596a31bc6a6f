package kernels

import "math"

// SoftmaxMatTVecAdd sets x to its softmax in place and adds to dst the
// x-weighted sum of the rows of A: with x an attention step's scores and A its
// values, x ends as the weights and dst gains the context, as Softmax(x, x)
// followed by MatTVecAdd(dst, a, x) would.
//
// The weights keep Softmax's bounds, but may differ from Softmax's result in
// the last place (the sum may run in another order). Each dst[c] is within
// γₙ₊₂·(|dst[c]| + Σᵣ|x[r]·A[r,c]|) of dst[c] + Σᵣ x[r]·A[r,c] for the
// weights x returned (n = a.Rows, γₙ = n·u/(1−n·u), u = 2⁻²⁴). Special values
// are Softmax's and MatTVecAdd's on every ISA: a NaN score makes every weight, and
// so dst, NaN; a row of −Inf (fully masked) gives weights +0 and leaves dst
// bit for bit unchanged, whatever A holds; +Inf scores share the weight 1.
//
// It panics unless len(dst) = a.Cols and len(x) = a.Rows, and if dst
// overlaps x or the elements of A, or x overlaps A. It does not allocate, and
// is safe for concurrent use on disjoint dst and x.
func SoftmaxMatTVecAdd(dst []float32, a Matrix, x []float32) {
	if !a.valid() {
		a.invalid("SoftmaxMatTVecAdd", "a")
	}
	if len(dst) != a.Cols || len(x) != a.Rows {
		panicf("SoftmaxMatTVecAdd: a is %d×%d but len(dst)=%d, len(x)=%d", a.Rows, a.Cols, len(dst), len(x))
	}
	checkDisjoint("SoftmaxMatTVecAdd", "dst", dst, "x", x)
	checkDisjoint("SoftmaxMatTVecAdd", "dst", dst, "a", a.span())
	checkDisjoint("SoftmaxMatTVecAdd", "x", x, "a", a.span())
	if a.Rows == 0 {
		return
	}
	if x[0] == float32(math.Inf(-1)) && maxOf(x) == x[0] {
		clear(x) // a fully masked row: zero weights, no context pass
		return
	}
	if a.Cols == 0 {
		softmax(x, x)
		return
	}
	softmaxMatTVec(dst, a.Data, a.Stride, x)
}
