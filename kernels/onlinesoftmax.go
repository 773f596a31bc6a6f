package kernels

import (
	"math"

	"github.com/heedml/heed/internal/fallback"
)

// OnlineSoftmax folds x, the scores of one query against a block of keys, into
// an online (blockwise) softmax whose running maximum is m (−Inf before the
// first block): it sets m' = max(m, max x) and x[i] = e^(x[i]−m') in place,
// and returns m' and Σᵢ x[i] of the new x. The caller rescales what it
// accumulated against m by e^(m−m').
//
// Accuracy, when m' is finite: x[i] is within (|x[i]−m'| + 4)·u relative of
// e^(x[i]−m') (u = 2⁻²⁴: one rounding of the difference, then Exp's 2 ULP), or
// 2⁻¹²⁶ absolute where that is subnormal (Exp flushes to zero); the sum is
// within γₙ·Σ of the new x[i] (n = len(x)).
//
// Special values, the same on every ISA: a NaN in x or m makes m', the sum and
// every x[i] NaN; when m' = +Inf, the x[i] that are +Inf become 1 and the
// others 0 (the softmax's rule), and the sum counts them; when m' = −Inf (m
// and every x[i] −Inf) x becomes zeros and the sum 0. An empty x returns m
// and 0.
//
// OnlineSoftmax does not allocate and is safe for concurrent use on disjoint x.
func OnlineSoftmax(x []float32, m float32) (max, sum float32) {
	if len(x) == 0 {
		return m, 0
	}
	if m == m {
		mx, s, st := onlineSoftmax(x, m)
		switch st {
		case softmaxDone:
			return mx, s
		case softmaxNaN:
			return onlineSoftmaxNaN(x)
		}
	}
	return onlineSoftmaxGo(x, m)
}

// OnlineSoftmaxBand is [OnlineSoftmax] on each row of x, the scores of x.Rows
// queries against one block of keys, where row i holds its first
// nᵢ = min(x.Cols, max(0, d+i)) scores: the staircase of a causal mask (any
// d ≥ x.Cols takes whole rows). Row i's first nᵢ elements, m[i] and sum[i]
// become what
//
//	m[i], sum[i] = OnlineSoftmax(x_i[:nᵢ], m[i])
//
// makes of them, bit for bit, and its elements past nᵢ are set to 0, so the
// row is ready to weight a block of values. A row with nᵢ = 0 keeps m[i], gets
// sum[i] = 0 and is zeroed. Accuracy and special values are OnlineSoftmax's,
// row by row.
//
// On AVX2 and AVX-512 one kernel takes the rows in turn, each row's maximum
// taken before the exponentials of the row before it, so that the reductions
// of one row overlap the other's vector work.
//
// It panics, naming the sizes, before any work, if x is not a valid Matrix or
// m or sum holds fewer than x.Rows elements. It does not allocate and is safe
// for concurrent use on disjoint x, m and sum.
func OnlineSoftmaxBand(x Matrix, d int, m, sum []float32) {
	x.check("OnlineSoftmaxBand", "x")
	if len(m) < x.Rows || len(sum) < x.Rows {
		panicf("OnlineSoftmaxBand: x has %d rows, m %d and sum %d elements: want at least the rows", x.Rows, len(m), len(sum))
	}
	if x.Rows == 0 {
		return
	}
	m, sum = m[:x.Rows], sum[:x.Rows]
	d = min(max(d, -x.Rows), x.Cols) // the same nᵢ, and d+i cannot overflow
	marked, ok := 0, false
	if x.Cols > 0 {
		marked, ok = onlineSoftmaxBand(x, d, m, sum)
	}
	if ok && marked == 0 {
		return
	}
	for i := range x.Rows {
		if ok && sum[i] == sum[i] {
			continue // done by the kernel
		}
		r, n := x.Data[i*x.Stride:i*x.Stride+x.Cols], min(x.Cols, max(0, d+i))
		if ok && m[i] != m[i] {
			// The kernel met a NaN (in x, or in m[i]): the result is NaN.
			fallback.FillNaN(r[:n])
		} else {
			m[i], sum[i] = OnlineSoftmax(r[:n], m[i])
		}
		clear(r[n:])
	}
}

// onlineSoftmaxNaN is OnlineSoftmax's result when x or m holds a NaN.
func onlineSoftmaxNaN(x []float32) (float32, float32) {
	fallback.FillNaN(x)
	nan := float32(math.NaN())
	return nan, nan
}

// onlineSoftmaxGo is OnlineSoftmax from the package's kernels: every special
// value, AVX2 rows shorter than a vector, and the ISAs without an
// onlineSoftmax kernel.
func onlineSoftmaxGo(x []float32, m float32) (float32, float32) {
	mx := Max(x)
	if m != m || mx != mx {
		return onlineSoftmaxNaN(x)
	}
	mx = max(m, mx)
	switch {
	case math.IsInf(float64(mx), -1):
		clear(x)
		return mx, 0
	case math.IsInf(float64(mx), 1):
		var n float32
		for i, v := range x {
			if math.IsInf(float64(v), 1) {
				x[i] = 1
				n++
			} else {
				x[i] = 0
			}
		}
		return mx, n
	}
	for i := range x {
		x[i] -= mx
	}
	Exp(x, x)
	return mx, Sum(x)
}
