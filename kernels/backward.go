package kernels

import (
	"unsafe"

	"github.com/heedml/heed/internal/fallback"
)

// The backward kernels: the gradient of a loss with respect to the input x of
// Softmax, LogSoftmax, Tanh and Sigmoid, given their outputs y and the
// gradient dy of the loss with respect to those outputs, and the element-wise
// work of a flash-attention backward tile (SoftmaxRecompute,
// SoftmaxBackwardBlock). They write a fresh gradient (no Add suffix).
//
// In the bounds, u = 2⁻²⁴ (the unit roundoff), γₖ = k·u/(1−k·u) and
// η = 2⁻¹⁴⁹ (the smallest subnormal: what a product that underflows may lose).
// A NaN result is a quiet NaN whose sign and payload are unspecified (they
// may differ between ISAs). None of these kernels allocates, and each is safe
// for concurrent use on disjoint outputs.

// SoftmaxBackward sets dx = y∘(dy − ⟨y, dy⟩): the gradient of a loss with
// respect to the input x of y = Softmax(x), given y and the gradient dy of
// the loss with respect to y. It panics unless dx, y and dy have the same
// length; dx may be y or dy (the same slice, for an update in place), and it
// panics, naming the slices, if dx otherwise overlaps either. y and dy may
// overlap each other.
//
// Masked entries: where y[i] = 0 (a masked key, or a probability that
// underflowed) dx[i] = +0, and y[i]·dy[i] is left out of ⟨y, dy⟩, so that
// whatever dy holds there (±Inf or NaN included) reaches no other entry. A
// fully masked row (y all zero) gives dx = 0.
//
// Accuracy: ⟨y, dy⟩ is summed with fused multiply-adds, in an order that
// depends on the ISA, then dx[i] = (dy[i] − ⟨y, dy⟩)·y[i] rounds twice, so
// with n = len(y) and S = Σⱼ|y[j]·dy[j]|
//
//	|dx[i] − exact| ≤ γₙ₊₂·|y[i]|·(|dy[i]| + S) + (n·|y[i]| + 1)·η.
//
// The bound is relative to |y[i]|·(|dy[i]| + S), not to |dx[i]|: where dy[i]
// is close to ⟨y, dy⟩ the difference cancels.
//
// Special values, the same on every ISA: a NaN in y, or in dy where y ≠ 0,
// makes every dx[i] with y[i] ≠ 0 NaN; infinities follow IEEE arithmetic
// through the formula (an infinite dy[i] with y[i] ≠ 0 makes ⟨y, dy⟩
// infinite, dx[i] NaN as Inf − Inf, and the other nonzero entries
// infinite). The one exception comes from the sum's ISA-dependent order:
// when its finite terms overflow, it may overflow on one ISA and not on
// another, and so may dy[i] − ⟨y, dy⟩ (which then gives ±Inf or NaN where
// the exact dx[i] is finite).
func SoftmaxBackward(dx, y, dy []float32) {
	checkBackwardLen("SoftmaxBackward", dx, y, dy)
	checkBackwardAlias("SoftmaxBackward", dx, y, dy)
	if len(y) == 0 {
		return
	}
	softmaxBackwardRows(dx, y, dy, 1, len(y), len(y), len(y), len(y))
}

// SoftmaxBackwardRows is SoftmaxBackward on every row: row i of dx is set
// from row i of y and of dy (the softmax of each row of a block of scores),
// with the accuracy and special values of SoftmaxBackward for n = y.Cols.
// dx may be y or dy (the same matrix: the same first element and stride).
// It panics, naming the arguments and sizes, before any work, unless the
// three are valid matrices of the same shape, and if dx otherwise overlaps y
// or dy. On AVX2, AVX-512 and NEON one assembly call takes every row.
func SoftmaxBackwardRows(dx, y, dy Matrix) {
	checkBackwardRows("SoftmaxBackwardRows", dx, y, dy)
	if y.Rows == 0 || y.Cols == 0 {
		return
	}
	softmaxBackwardRows(dx.span(), y.span(), dy.span(), y.Rows, y.Cols, dx.Stride, y.Stride, dy.Stride)
}

// LogSoftmaxBackward sets dx = dy − e^y·Σⱼ dy[j]: the gradient of a loss with
// respect to the input x of y = LogSoftmax(x) (e^y is Softmax(x)), given y
// and the gradient dy of the loss with respect to y. It panics unless dx, y
// and dy have the same length; dx may be y or dy (the same slice), and it
// panics, naming the slices, if dx otherwise overlaps either.
//
// Accuracy: Σ dy is summed in an order that depends on the ISA, e^y[i] is
// Exp's (2 ULP), and dx[i] = dy[i] − e^y[i]·Σ rounds once (a fused
// multiply-add), so with n = len(y) and T = Σⱼ|dy[j]|
//
//	|dx[i] − exact| ≤ u·|dy[i]| + γₙ₊₆·e^y[i]·T + 2⁻¹²⁵·T + η
//
// (2⁻¹²⁵·T covers e^y[i] below 2⁻¹²⁶, which Exp flushes to zero).
//
// Special values, the same on every ISA: y[i] = −Inf (a masked entry, as
// LogSoftmax gives it) has e^y[i] = 0, so dx[i] = dy[i] when Σ dy is finite,
// and a fully masked row (y all −Inf) gives dx = dy; otherwise NaN and
// infinities follow IEEE arithmetic and Exp's rules (a NaN in y[i] makes
// dx[i] NaN, a NaN in dy every dx[i]; an infinite Σ dy makes dx[i]
// infinite, or NaN where e^y[i] = 0 (0·Inf) or where dy[i] is that infinity
// itself (Inf − Inf)). The exceptions come from the sum's ISA-dependent
// order: when the finite elements of dy overflow their sum, it may overflow
// on one ISA and not on another; and where e^y[i] is infinite
// (y[i] ≥ 88.72284) dx[i] is an infinity of Σ's sign, or NaN where Σ is 0,
// which may differ between ISAs when Σ is within its rounding error of 0.
func LogSoftmaxBackward(dx, y, dy []float32) {
	checkBackwardLen("LogSoftmaxBackward", dx, y, dy)
	checkBackwardAlias("LogSoftmaxBackward", dx, y, dy)
	if len(y) == 0 {
		return
	}
	logSoftmaxBackwardRows(dx, y, dy, 1, len(y), len(y), len(y), len(y))
}

// LogSoftmaxBackwardRows is LogSoftmaxBackward on every row: row i of dx is
// set from row i of y and of dy, with the accuracy and special values of
// LogSoftmaxBackward for n = y.Cols, and the shapes, aliasing and panics of
// SoftmaxBackwardRows. On AVX2, AVX-512 and NEON one assembly call takes every
// row.
func LogSoftmaxBackwardRows(dx, y, dy Matrix) {
	checkBackwardRows("LogSoftmaxBackwardRows", dx, y, dy)
	if y.Rows == 0 || y.Cols == 0 {
		return
	}
	logSoftmaxBackwardRows(dx.span(), y.span(), dy.span(), y.Rows, y.Cols, dx.Stride, y.Stride, dy.Stride)
}

// TanhBackward sets dx[i] = dy[i]·(1 − y[i]²): the gradient of a loss with
// respect to x for y = Tanh(x), from the outputs y. It panics unless dx, y
// and dy have the same length; dx may be y or dy (the same slice), and it
// panics, naming the slices, if dx otherwise overlaps either.
//
// 1 − y² rounds once (a fused multiply-add), then the product, so dx[i] is
// within γ₂·|dy[i]·(1 − y[i]²)| + η/2 of the exact value for the given y, and
// every ISA gives the same bits. The derivative inherits the error of y: near
// saturation, where Tanh rounds to ±1, it is 0.
//
// Special values follow IEEE arithmetic: NaN gives NaN, y = ±1 with an
// infinite dy gives NaN (0·Inf), and an infinite y, or one so large that
// 1 − y² overflows (|y| ≥ 2⁶⁴), gives −Inf·dy (NaN for dy = 0).
func TanhBackward(dx, y, dy []float32) {
	checkBackwardLen("TanhBackward", dx, y, dy)
	checkBackwardAlias("TanhBackward", dx, y, dy)
	tanhBackward(dx, y, dy)
}

// SigmoidBackward sets dx[i] = dy[i]·y[i]·(1 − y[i]): the gradient of a loss
// with respect to x for y = Sigmoid(x), from the outputs y. It panics unless
// dx, y and dy have the same length; dx may be y or dy (the same slice), and
// it panics, naming the slices, if dx otherwise overlaps either.
//
// y·(1 − y) is computed as y − y², rounded once (a fused multiply-add), then
// the product, so dx[i] is within γ₂·|dy[i]·y[i]·(1 − y[i])| +
// (1 + |dy[i]|)·η/2 of the exact value for the given y, and every ISA gives
// the same bits.
//
// Special values follow IEEE arithmetic: NaN gives NaN, y = 0 or 1 with an
// infinite dy gives NaN (0·Inf), an infinite y gives NaN (Inf − Inf), and
// one so large that y − y² overflows (|y| ≥ 2⁶⁴) gives −Inf·dy (NaN for
// dy = 0).
func SigmoidBackward(dx, y, dy []float32) {
	checkBackwardLen("SigmoidBackward", dx, y, dy)
	checkBackwardAlias("SigmoidBackward", dx, y, dy)
	sigmoidBackward(dx, y, dy)
}

// SoftmaxRecompute sets p[i][j] = e^(scale·s[i][j] − lse[i]) for
// j < nᵢ = min(s.Cols, max(0, d+i)) and p[i][j] = 0 for j ≥ nᵢ: the
// probabilities of a tile of flash attention (the scores s of a block of query
// rows against a block of keys) recomputed from the logsumexp lse that the
// forward saved for each query row. nᵢ is the causal staircase of
// OnlineSoftmaxBand and GemmPackedBand: d ≥ s.Cols takes every column, and
// the elements of s past nᵢ are not read. One call takes the whole tile.
//
// Each p[i][j] is, bit for bit, what Exp gives on the same ISA for the
// argument a = scale·s[i][j] − lse[i] rounded once (a fused multiply-add; for
// scale = 1 that is the rounded difference): within (|a| + 5)·u relative of
// e^(scale·s[i][j] − lse[i]), to first order (the rounding of a moves the
// exponential by up to |a|·u, Exp adds 2 ULP), or 2⁻¹²⁶ absolute where that
// is below 2⁻¹²⁶ (Exp flushes to zero).
//
// Special values: a row with lse[i] = −Inf (a query row that attends to no
// key, which the forward saves so) is all zeros, whatever s holds; otherwise
// the argument follows IEEE arithmetic and Exp's rules (a masked score
// s = −Inf gives 0 for scale > 0, NaN in s or lse gives NaN, lse[i] = +Inf
// gives 0 where scale·s is finite).
//
// It panics, naming the sizes, before any work, unless s and p are valid
// matrices of the same shape and len(lse) ≥ s.Rows; p may be s (the same
// matrix: the same first element and stride), and it panics if p otherwise
// overlaps s, or overlaps lse.
func SoftmaxRecompute(p, s Matrix, scale float32, lse []float32, d int) {
	s.check("SoftmaxRecompute", "s")
	p.check("SoftmaxRecompute", "p")
	if p.Rows != s.Rows || p.Cols != s.Cols || len(lse) < s.Rows {
		panicf("SoftmaxRecompute: s is %d×%d, p %d×%d, len(lse)=%d: want p the shape of s and len(lse) ≥ %d",
			s.Rows, s.Cols, p.Rows, p.Cols, len(lse), s.Rows)
	}
	checkMatrixAlias("SoftmaxRecompute", "p", p, "s", s)
	checkDisjoint("SoftmaxRecompute", "p", p.span(), "lse", lse)
	if s.Rows == 0 || s.Cols == 0 {
		return
	}
	d = min(max(d, -s.Rows), s.Cols) // the same nᵢ, and d+i cannot overflow
	softmaxRecompute(p.span(), s.span(), s.Rows, s.Cols, p.Stride, s.Stride, d, scale, lse[:s.Rows])
}

// SoftmaxBackwardBlock sets ds[i][j] = p[i][j]·(dp[i][j] − delta[i]): the
// gradient of the scores of a flash-attention tile, dS = P∘(dP − D), from its
// probabilities P (SoftmaxRecompute), the gradient dP = dO·Vᵀ of those
// probabilities and D = rowsum(dO∘O), which equals ⟨p_i, dp_i⟩ over the whole
// row i of attention. One call takes the whole tile.
//
// Where p[i][j] = 0 (masked, or past the causal staircase) ds[i][j] = +0,
// whatever dp holds there. Elsewhere dp − delta rounds, then the product, so
// ds[i][j] is within γ₂·|p·(dp − delta[i])| + η/2 of the exact value, every
// ISA gives the same bits, and special values follow IEEE arithmetic (NaN
// gives NaN; an infinite dp or delta gives ±Inf, or NaN as Inf − Inf).
//
// It panics, naming the sizes, before any work, unless ds, p and dp are
// valid matrices of the same shape and len(delta) ≥ p.Rows; ds may be p or
// dp (the same matrix: the same first element and stride), and it panics if
// ds otherwise overlaps them, or overlaps delta.
func SoftmaxBackwardBlock(ds, p, dp Matrix, delta []float32) {
	checkBackwardRows("SoftmaxBackwardBlock", ds, p, dp)
	if len(delta) < p.Rows {
		panicf("SoftmaxBackwardBlock: p has %d rows but len(delta)=%d", p.Rows, len(delta))
	}
	checkDisjoint("SoftmaxBackwardBlock", "ds", ds.span(), "delta", delta)
	if p.Rows == 0 || p.Cols == 0 {
		return
	}
	softmaxBackwardBlock(ds.span(), p.span(), dp.span(), p.Rows, p.Cols, ds.Stride, p.Stride, dp.Stride, delta[:p.Rows])
}

// checkBackwardLen panics unless dx, y and dy have the same length.
func checkBackwardLen(kernel string, dx, y, dy []float32) {
	if len(dx) != len(y) || len(dy) != len(y) {
		panicf("%s: len(dx)=%d, len(y)=%d, len(dy)=%d; want equal lengths", kernel, len(dx), len(y), len(dy))
	}
}

// checkBackwardAlias panics unless dx is y, dy, or disjoint from both.
func checkBackwardAlias(kernel string, dx, y, dy []float32) {
	if shifted(dx, y) {
		panic(aliasError{kernel, "dx", "y", true})
	}
	if shifted(dx, dy) {
		panic(aliasError{kernel, "dx", "dy", true})
	}
}

// checkBackwardRows validates the matrices of a rows kernel: valid, the same
// shape, and the output dst (named by the kernel's convention) either one of
// the inputs or disjoint from both.
func checkBackwardRows(kernel string, dst, a, b Matrix) {
	names := [3]string{"dx", "y", "dy"}
	if kernel == "SoftmaxBackwardBlock" {
		names = [3]string{"ds", "p", "dp"}
	}
	dst.check(kernel, names[0])
	a.check(kernel, names[1])
	b.check(kernel, names[2])
	if dst.Rows != a.Rows || dst.Cols != a.Cols || b.Rows != a.Rows || b.Cols != a.Cols {
		panicf("%s: %s is %d×%d, %s %d×%d, %s %d×%d; want the same shape", kernel,
			names[0], dst.Rows, dst.Cols, names[1], a.Rows, a.Cols, names[2], b.Rows, b.Cols)
	}
	checkMatrixAlias(kernel, names[0], dst, names[1], a)
	checkMatrixAlias(kernel, names[0], dst, names[2], b)
}

// checkMatrixAlias panics unless dst and x (valid matrices of the same
// shape) are the same matrix, with the same first element and (for more
// than one row) the same stride, or their elements' spans are disjoint.
func checkMatrixAlias(kernel, dn string, dst Matrix, xn string, x Matrix) {
	a, b := dst.span(), x.span()
	if !overlaps(a, b) {
		return
	}
	if unsafe.SliceData(a) == unsafe.SliceData(b) && (dst.Stride == x.Stride || dst.Rows == 1) {
		return
	}
	panic(aliasError{kernel, dn, xn, true})
}

// softmaxBackwardRowsGo is softmaxBackwardRows in Go: fallback row by row.
func softmaxBackwardRowsGo(dx, y, dy []float32, rows, cols, ldx, ldy, lddy int) {
	for i := 0; i < rows; i++ {
		fallback.SoftmaxBackward(dx[i*ldx:i*ldx+cols], y[i*ldy:i*ldy+cols], dy[i*lddy:i*lddy+cols])
	}
}

// logSoftmaxBackwardRowsGo is logSoftmaxBackwardRows in Go: fallback row by
// row.
func logSoftmaxBackwardRowsGo(dx, y, dy []float32, rows, cols, ldx, ldy, lddy int) {
	for i := 0; i < rows; i++ {
		fallback.LogSoftmaxBackward(dx[i*ldx:i*ldx+cols], y[i*ldy:i*ldy+cols], dy[i*lddy:i*lddy+cols])
	}
}
