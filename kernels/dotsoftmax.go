package kernels

import "math"

// SoftmaxState is the running state of a softmax over a stream of scores: Max
// is the largest score so far and Sum = Σ e^(score−Max). The empty state is
// {Max: −Inf, Sum: 0}.
type SoftmaxState struct{ Max, Sum float32 }

// DotSoftmaxMatTVec is one streaming pass of a dot-product attention step over
// the matrix A, whose rows are both the keys and the values (the inner loop of
// flash decoding). It sets scores = A·h and, with (m, l) = *st and M the larger
// of m and the largest score,
//
//	ctx = e^(m−M)·ctx + Σᵣ e^(scores[r]−M)·A[r,·]
//	*st = {M, e^(m−M)·l + Σᵣ e^(scores[r]−M)}.
//
// From st = {−Inf, 0} and ctx = 0, calls over consecutive blocks of rows
// leave the step's softmax as e^(scores[r]−st.Max)/st.Sum and its context as
// ctx/st.Sum, with each row of A read once.
//
// Accuracy: each score is within γ_d·Σᵢ|A[r,i]·h[i]| of the exact dot product
// (d = a.Cols). Each weight e^(score−M) is within Exp's 2 ULP of e to its
// rounded argument, off by |score−M|·u relative (u = 2⁻²⁴, as in Softmax's
// bound), and each rescaling of ctx and the sum by e^(m−M) adds one rounding,
// that factor's error and its argument's |m−M|·u: one per new maximum, a
// handful for scores in random order, one per block when they rise steadily.
// The tests check every term within γ_k + (|score−M| + D)·u, k counting the
// rows, two roundings per exponential and three per rescaling, and D the
// largest |score−M|.
//
// It returns false as soon as a score is NaN or ±Inf, leaving ctx, scores and
// *st partly updated: the caller then takes the softmax's special-value rules
// (Softmax, then MatTVecAdd).
//
// It panics, before writing anything, unless len(scores) = a.Rows,
// len(ctx) = len(h) = a.Cols and st is not nil, and if ctx overlaps scores, h
// or the elements of A, or scores overlaps h or A. It does not allocate, and
// is safe for concurrent use on disjoint ctx, scores and st.
func DotSoftmaxMatTVec(ctx, scores []float32, a Matrix, h []float32, st *SoftmaxState) bool {
	if !a.valid() {
		a.invalid("DotSoftmaxMatTVec", "a")
	}
	if len(scores) != a.Rows || len(ctx) != a.Cols || len(h) != a.Cols {
		panicf("DotSoftmaxMatTVec: a is %d×%d but len(scores)=%d, len(ctx)=%d, len(h)=%d",
			a.Rows, a.Cols, len(scores), len(ctx), len(h))
	}
	if st == nil {
		panicf("DotSoftmaxMatTVec: st is nil")
	}
	checkStepAlias("DotSoftmaxMatTVec", ctx, scores, h, a.span(), nil)
	if a.Rows == 0 {
		return true
	}
	if a.Cols == 0 { // every score is 0
		return dotSoftmaxRows(ctx, scores, a.Data, a.Stride, h, st)
	}
	return dotSoftmaxMatTVec(ctx, scores, a.Data, a.Stride, h, st)
}

// dotSoftmaxRows is DotSoftmaxMatTVec for the len(scores) rows at a with
// stride lda, a row at a time: Dot, then Axpy of the row into ctx with weight
// e^(score−max), the exponential rounded from float64.
func dotSoftmaxRows(ctx, scores, a []float32, lda int, h []float32, st *SoftmaxState) bool {
	d := len(ctx)
	for r := range scores {
		var row []float32
		s := float32(0)
		if d > 0 {
			row = a[r*lda : r*lda+d]
			s = Dot(row, h)
		}
		scores[r] = s
		if s-s != 0 { // NaN or ±Inf
			return false
		}
		raiseMax(st, ctx, s)
		e := float32(math.Exp(float64(s - st.Max)))
		st.Sum += e
		if d > 0 {
			axpy(e, row, ctx)
		}
	}
	return true
}

// checkStepAlias panics if the outputs of a fused step, ctx and scores,
// overlap each other, the query h, or the keys k or values v (v nil when the
// values are the keys).
func checkStepAlias(kernel string, ctx, scores, h, k, v []float32) {
	checkDisjoint(kernel, "ctx", ctx, "scores", scores)
	checkDisjoint(kernel, "ctx", ctx, "h", h)
	checkDisjoint(kernel, "scores", scores, "h", h)
	checkDisjoint(kernel, "ctx", ctx, "k", k)
	checkDisjoint(kernel, "scores", scores, "k", k)
	checkDisjoint(kernel, "ctx", ctx, "v", v)
	checkDisjoint(kernel, "scores", scores, "v", v)
}

// raiseMax makes m the state's maximum when it is larger: ctx and the sum
// rescaled by e^(st.Max−m) (one rounding each).
func raiseMax(st *SoftmaxState, ctx []float32, m float32) {
	if m > st.Max {
		f := float32(math.Exp(float64(st.Max - m)))
		scale(f, ctx)
		st.Sum *= f
		st.Max = m
	}
}
