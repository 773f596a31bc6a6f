package kernels

import (
	"math"
	mathbits "math/bits"

	"github.com/heedml/heed/internal/fallback"
)

// BF16Matrix is a row-major bfloat16 matrix laid out as Matrix: element (i, j)
// is Data[i*Stride+j], and the same validity rules apply.
type BF16Matrix struct {
	Rows, Cols int
	Stride     int
	Data       []BF16
}

// F16Matrix is a row-major binary16 matrix laid out as Matrix: element (i, j)
// is Data[i*Stride+j], and the same validity rules apply.
type F16Matrix struct {
	Rows, Cols int
	Stride     int
	Data       []F16
}

// Q8Matrix is a row-major matrix of 8-bit blocks: row i is the Q8Blocks(Cols)
// blocks from Data[i*Stride], Stride counted in blocks; element (i, j) is
// block i*Stride + j/32, value j mod 32. A valid Q8Matrix has Rows, Cols ≥ 0,
// Stride ≥ Q8Blocks(Cols) when Rows > 1, and len(Data) ≥ (Rows−1)·Stride +
// Q8Blocks(Cols) when Rows, Cols > 0. The values of the last block of a row
// past Cols are never read as elements: kernels read them only as Q (which
// ToQ8 sets to 0) multiplied by nothing, and never read past the row's last
// block.
type Q8Matrix struct {
	Rows, Cols int
	Stride     int
	Data       []Q8Block
}

// NewBF16Matrix returns a new BF16Matrix holding a rounded to bfloat16
// (ToBF16 row by row), with Stride = Cols.
func NewBF16Matrix(a Matrix) BF16Matrix {
	a.check("NewBF16Matrix", "a")
	m := BF16Matrix{Rows: a.Rows, Cols: a.Cols, Stride: a.Cols, Data: make([]BF16, a.Rows*a.Cols)}
	for i := 0; i < a.Rows && a.Cols > 0; i++ {
		ToBF16(m.Data[i*a.Cols:(i+1)*a.Cols], a.Row(i))
	}
	return m
}

// NewF16Matrix returns a new F16Matrix holding a rounded to binary16 (ToF16
// row by row), with Stride = Cols.
func NewF16Matrix(a Matrix) F16Matrix {
	a.check("NewF16Matrix", "a")
	m := F16Matrix{Rows: a.Rows, Cols: a.Cols, Stride: a.Cols, Data: make([]F16, a.Rows*a.Cols)}
	for i := 0; i < a.Rows && a.Cols > 0; i++ {
		ToF16(m.Data[i*a.Cols:(i+1)*a.Cols], a.Row(i))
	}
	return m
}

// NewQ8Matrix returns a new Q8Matrix holding a in 8-bit blocks (ToQ8 row by
// row), with Stride = Q8Blocks(Cols).
func NewQ8Matrix(a Matrix) Q8Matrix {
	a.check("NewQ8Matrix", "a")
	nb := Q8Blocks(a.Cols)
	m := Q8Matrix{Rows: a.Rows, Cols: a.Cols, Stride: nb, Data: make([]Q8Block, a.Rows*nb)}
	for i := 0; i < a.Rows && a.Cols > 0; i++ {
		ToQ8(m.Data[i*nb:(i+1)*nb], a.Row(i))
	}
	return m
}

func (m BF16Matrix) check(kernel, name string) {
	checkShape(kernel, name, m.Rows, m.Cols, m.Stride, m.Cols, len(m.Data))
}

func (m F16Matrix) check(kernel, name string) {
	checkShape(kernel, name, m.Rows, m.Cols, m.Stride, m.Cols, len(m.Data))
}

func (m Q8Matrix) check(kernel, name string) {
	checkShape(kernel, name, m.Rows, m.Cols, m.Stride, Q8Blocks(m.Cols), len(m.Data))
}

// checkShape is Matrix.check for a matrix whose rows hold width elements of
// Data each (Cols, or its blocks).
func checkShape(kernel, name string, rows, cols, stride, width, have int) {
	if rows < 0 || cols < 0 {
		panicf("%s: %s is %d×%d: negative size", kernel, name, rows, cols)
	}
	if rows == 0 || cols == 0 {
		return
	}
	if rows > 1 && stride < width {
		panicf("%s: %s is %d×%d with stride %d < %d", kernel, name, rows, cols, stride, width)
	}
	if hi, lo := mathbits.Mul64(uint64(rows-1), uint64(stride)); hi != 0 || lo > uint64(maxInt-width) {
		panicf("%s: %s is %d×%d with stride %d: size overflows int", kernel, name, rows, cols, stride)
	}
	if need := (rows-1)*stride + width; have < need {
		panicf("%s: %s is %d×%d with stride %d: len(%s.Data)=%d < %d", kernel, name, rows, cols, stride, name, have, need)
	}
}

// MatVecBF16 sets dst = A·x for a bfloat16 matrix A, in float32: each dst[r]
// is within γₙ·Σ_c|Â[r,c]·x[c]| (n = a.Cols) of the exact product of the
// stored values Â, as MatVec on the widened matrix; against the float32
// matrix A that was stored, add Σ_c|Â[r,c] − A[r,c]|·|x[c]| (BF16's storage
// bound). It panics unless len(dst) = a.Rows and len(x) = a.Cols. dst must
// not overlap x or a.Data. No allocation; safe for concurrent use.
func MatVecBF16(dst []float32, a BF16Matrix, x []float32) {
	a.check("MatVecBF16", "a")
	if len(dst) != a.Rows || len(x) != a.Cols {
		panicf("MatVecBF16: a is %d×%d but len(dst)=%d, len(x)=%d", a.Rows, a.Cols, len(dst), len(x))
	}
	if a.Rows == 0 {
		return
	}
	if a.Cols == 0 {
		clear(dst)
		return
	}
	matVecBF16(dst, u16s(a.Data), a.Stride, x)
}

// MatVecF16 is MatVecBF16 for a binary16 matrix: the same bound on the stored
// values, F16's storage bound against the float32 matrix.
func MatVecF16(dst []float32, a F16Matrix, x []float32) {
	a.check("MatVecF16", "a")
	if len(dst) != a.Rows || len(x) != a.Cols {
		panicf("MatVecF16: a is %d×%d but len(dst)=%d, len(x)=%d", a.Rows, a.Cols, len(dst), len(x))
	}
	if a.Rows == 0 {
		return
	}
	if a.Cols == 0 {
		clear(dst)
		return
	}
	matVecF16(dst, u16s(a.Data), a.Stride, x)
}

// MatVecQ8 sets dst = A·x for a matrix of 8-bit blocks: each dst[r] is
// Σ_b Scale_b·(Σ_i Q_b[i]·x[32b+i]) in float32, within γₙ₊₂·Σ_c|Â[r,c]·x[c]|
// (n = a.Cols, one more rounding per term than a dot product for the scale)
// of the exact product of the stored values Â[r,c] = Scale·Q; against the
// float32 matrix that was stored, add Σ_c (Scale_c/2)·|x[c]|. A block with a
// NaN scale makes its row's result NaN. It panics unless len(dst) = a.Rows
// and len(x) = a.Cols. dst must not overlap x or a.Data. No allocation; safe
// for concurrent use.
func MatVecQ8(dst []float32, a Q8Matrix, x []float32) {
	a.check("MatVecQ8", "a")
	if len(dst) != a.Rows || len(x) != a.Cols {
		panicf("MatVecQ8: a is %d×%d but len(dst)=%d, len(x)=%d", a.Rows, a.Cols, len(dst), len(x))
	}
	if a.Rows == 0 {
		return
	}
	if a.Cols == 0 {
		clear(dst)
		return
	}
	matVecQ8(dst, a.Data, a.Stride, x)
}

// MatTVecBF16 sets dst += Aᵀ·x for a bfloat16 matrix A: the x-weighted sum of
// its rows (the context of an attention step). Each dst[c] is within
// γₙ₊₁·(|dst[c]| + Σᵣ|x[r]·Â[r,c]|) (n = a.Rows) of the exact result on the
// stored values, as MatTVec; against the float32 matrix, add Σᵣ|x[r]|·|Â[r,c]
// − A[r,c]|. It panics unless len(dst) = a.Cols and len(x) = a.Rows. dst must
// not overlap x or a.Data. No allocation; safe for concurrent use.
func MatTVecBF16(dst []float32, a BF16Matrix, x []float32) {
	a.check("MatTVecBF16", "a")
	if len(dst) != a.Cols || len(x) != a.Rows {
		panicf("MatTVecBF16: a is %d×%d but len(dst)=%d, len(x)=%d", a.Rows, a.Cols, len(dst), len(x))
	}
	if a.Rows == 0 || a.Cols == 0 {
		return
	}
	matTVecBF16(dst, u16s(a.Data), a.Stride, x)
}

// MatTVecF16 is MatTVecBF16 for a binary16 matrix.
func MatTVecF16(dst []float32, a F16Matrix, x []float32) {
	a.check("MatTVecF16", "a")
	if len(dst) != a.Cols || len(x) != a.Rows {
		panicf("MatTVecF16: a is %d×%d but len(dst)=%d, len(x)=%d", a.Rows, a.Cols, len(dst), len(x))
	}
	if a.Rows == 0 || a.Cols == 0 {
		return
	}
	matTVecF16(dst, u16s(a.Data), a.Stride, x)
}

// MatTVecQ8 sets dst += Aᵀ·x for a matrix of 8-bit blocks: each row's weight
// x[r]·Scale is rounded once per block, then multiplies Q; each dst[c] is
// within γₙ₊₂·(|dst[c]| + Σᵣ|x[r]·Â[r,c]|) of the exact result on the stored
// values (n = a.Rows); against the float32 matrix add Σᵣ|x[r]|·Scale/2. It
// panics unless len(dst) = a.Cols and len(x) = a.Rows. dst must not overlap x
// or a.Data. No allocation; safe for concurrent use.
func MatTVecQ8(dst []float32, a Q8Matrix, x []float32) {
	a.check("MatTVecQ8", "a")
	if len(dst) != a.Cols || len(x) != a.Rows {
		panicf("MatTVecQ8: a is %d×%d but len(dst)=%d, len(x)=%d", a.Rows, a.Cols, len(dst), len(x))
	}
	if a.Rows == 0 || a.Cols == 0 {
		return
	}
	matTVecQ8(dst, a.Data, a.Stride, x)
}

// DotSoftmaxMatTVecBF16 is one streaming pass of a dot-product attention step
// over keys k and values v stored as bfloat16, the query h and the context
// ctx in float32 (pass the same matrix as k and v when the keys are the
// values). It sets scores = K·h and, with (m, l) = *st and M the larger of m
// and the largest score,
//
//	ctx = e^(m−M)·ctx + Σᵣ e^(scores[r]−M)·V[r,·]
//	*st = {M, e^(m−M)·l + Σᵣ e^(scores[r]−M)},
//
// as DotSoftmaxMatTVec does for one float32 matrix: from st = {−Inf, 0} and
// ctx = 0, calls over consecutive blocks of rows leave the softmax as
// e^(scores[r]−st.Max)/st.Sum and the context as ctx/st.Sum, each row of K
// and V read once. The rows go in blocks: their scores (as MatVecBF16), a
// rescaling of ctx and the sum when the block raises the maximum, their
// weights by the vector exponential of Exp, then the weighted values (as
// MatTVecBF16). On AVX2 and AVX-512, when len(h) and len(ctx) are multiples
// of 8 (of 32 for Q8), one kernel takes the blocks of eight rows and the rest
// go as on other CPUs (blocks of up to 32 KiB of keys and values).
//
// Accuracy on the stored values: each score within MatVecBF16's bound; each
// weight within Exp's bound of e to its rounded argument, off by |score−M|·u
// (u = 2⁻²⁴); each rescaling adds one rounding, its factor's error and
// |m−M|·u (one per block that raises the maximum); the weighted sum within
// MatTVecBF16's bound. Against float32 keys and values, add their storage
// rounding (BF16) to the scores and the context.
//
// It returns false as soon as a score is NaN or ±Inf, leaving ctx, scores and
// *st partly updated: the caller then takes the softmax's special-value rules
// (Softmax, then MatTVecBF16).
//
// It panics unless len(scores) = k.Rows = v.Rows, len(h) = k.Cols and len(ctx)
// = v.Cols. ctx must not overlap scores, h, k.Data or v.Data, nor scores h.
// No allocation; safe for concurrent use on distinct outputs.
func DotSoftmaxMatTVecBF16(ctx, scores []float32, k, v BF16Matrix, h []float32, st *SoftmaxState) bool {
	k.check("DotSoftmaxMatTVecBF16", "k")
	v.check("DotSoftmaxMatTVecBF16", "v")
	stepShape("DotSoftmaxMatTVecBF16", ctx, scores, h, k.Rows, k.Cols, v.Rows, v.Cols)
	return decodeStep(ctx, scores, k.stored(), v.stored(), h, st)
}

// DotSoftmaxMatTVecF16 is DotSoftmaxMatTVecBF16 with keys and values stored
// as binary16 (MatVecF16, MatTVecF16 and F16's storage bound).
func DotSoftmaxMatTVecF16(ctx, scores []float32, k, v F16Matrix, h []float32, st *SoftmaxState) bool {
	k.check("DotSoftmaxMatTVecF16", "k")
	v.check("DotSoftmaxMatTVecF16", "v")
	stepShape("DotSoftmaxMatTVecF16", ctx, scores, h, k.Rows, k.Cols, v.Rows, v.Cols)
	return decodeStep(ctx, scores, k.stored(), v.stored(), h, st)
}

// DotSoftmaxMatTVecQ8 is DotSoftmaxMatTVecBF16 with keys and values stored in
// 8-bit blocks (MatVecQ8, MatTVecQ8 and Q8Block's storage bound). A key block
// with a NaN scale gives a NaN score, so a false return.
func DotSoftmaxMatTVecQ8(ctx, scores []float32, k, v Q8Matrix, h []float32, st *SoftmaxState) bool {
	k.check("DotSoftmaxMatTVecQ8", "k")
	v.check("DotSoftmaxMatTVecQ8", "v")
	stepShape("DotSoftmaxMatTVecQ8", ctx, scores, h, k.Rows, k.Cols, v.Rows, v.Cols)
	return decodeStep(ctx, scores, k.stored(), v.stored(), h, st)
}

func stepShape(kernel string, ctx, scores, h []float32, kr, kc, vr, vc int) {
	if len(scores) != kr || vr != kr || len(h) != kc || len(ctx) != vc {
		panicf("%s: k is %d×%d, v is %d×%d but len(scores)=%d, len(h)=%d, len(ctx)=%d",
			kernel, kr, kc, vr, vc, len(scores), len(h), len(ctx))
	}
}

// stored is a key or value matrix of any format as the streaming step uses
// it (a concrete type, so that the step's weights stay on the stack).
type stored struct {
	format    uint8 // fmtBF16, fmtF16 or fmtQ8
	cols, lda int
	u16       []uint16
	q8        []Q8Block
	hq        []Q8Block // Q8 keys only: the quantised query (Q8Q8), or nil
}

const (
	fmtBF16 = iota
	fmtF16
	fmtQ8
)

func (m BF16Matrix) stored() stored {
	return stored{format: fmtBF16, cols: m.Cols, lda: m.Stride, u16: u16s(m.Data)}
}

func (m F16Matrix) stored() stored {
	return stored{format: fmtF16, cols: m.Cols, lda: m.Stride, u16: u16s(m.Data)}
}

func (m Q8Matrix) stored() stored {
	return stored{format: fmtQ8, cols: m.Cols, lda: m.Stride, q8: m.Data}
}

// rowBytes is the number of bytes a row holds.
func (m stored) rowBytes() int {
	if m.format == fmtQ8 {
		return 36 * Q8Blocks(m.cols)
	}
	return 2 * m.cols
}

// scoreRows sets dst = rows [r0, r0+len(dst)) times x (times m.hq if not
// nil); m.cols ≥ 1.
func (m stored) scoreRows(dst []float32, r0 int, x []float32) {
	switch m.format {
	case fmtBF16:
		matVecBF16(dst, m.u16[r0*m.lda:], m.lda, x)
	case fmtF16:
		matVecF16(dst, m.u16[r0*m.lda:], m.lda, x)
	default:
		if m.hq != nil {
			matVecQ8Q8(dst, m.q8[r0*m.lda:], m.lda, m.hq)
			return
		}
		matVecQ8(dst, m.q8[r0*m.lda:], m.lda, x)
	}
}

// addRows sets dst += (rows [r0, r0+len(w)))ᵀ·w; m.cols ≥ 1.
func (m stored) addRows(dst []float32, r0 int, w []float32) {
	switch m.format {
	case fmtBF16:
		matTVecBF16(dst, m.u16[r0*m.lda:], m.lda, w)
	case fmtF16:
		matTVecF16(dst, m.u16[r0*m.lda:], m.lda, w)
	default:
		matTVecQ8(dst, m.q8[r0*m.lda:], m.lda, w)
	}
}

// decodeStepKernel, when not stepBySpan, makes the fused step kernels
// (amd64) take their prefetching variant (stepPF) or the other (stepNear) at
// every size, for tests.
var decodeStepKernel = stepBySpan

const (
	stepBySpan = iota
	stepNear
	stepPF
)

// stepBlockBytes is the size of one block of key and value rows in the
// streaming step, and stepBlockMax the most rows in a block (the weights
// live in a stack array of that size).
const (
	stepBlockBytes = 32 << 10
	stepBlockMax   = 256
)

// decodeStep is the streaming step over stored keys and values, shapes
// checked.
func decodeStep(ctx, scores []float32, k, v stored, h []float32, st *SoftmaxState) bool {
	n := len(scores)
	if n == 0 {
		return true
	}
	bs := stepBlockMax
	if b := k.rowBytes() + v.rowBytes(); b > 0 {
		bs = min(stepBlockMax, max(8, stepBlockBytes/b/8*8))
	}
	var r0 int
	var ok bool
	if k.hq != nil {
		r0, ok = decodeStepQ8Q8Asm(ctx, scores, k, v, st)
	} else {
		r0, ok = decodeStepAsm(ctx, scores, k, v, h, st)
	}
	if !ok {
		return false
	}
	var wbuf [stepBlockMax]float32
	for ; r0 < n; r0 += bs {
		s := scores[r0:min(n, r0+bs)]
		if k.cols > 0 {
			k.scoreRows(s, r0, h)
		} else {
			clear(s)
		}
		m := st.Max
		for _, x := range s {
			if x-x != 0 { // NaN or ±Inf
				return false
			}
			m = max(m, x)
		}
		if m > st.Max {
			f := float32(math.Exp(float64(st.Max - m)))
			scale(f, ctx)
			st.Sum *= f
			st.Max = m
		}
		w := wbuf[:len(s)]
		st.Sum += expShift(w, s, st.Max)
		if len(ctx) > 0 {
			v.addRows(ctx, r0, w)
		}
	}
	return true
}

// expShiftGo sets w[i] = e^(s[i]−m) by the fallback's exponential and returns
// Σ w[i].
func expShiftGo(w, s []float32, m float32) float32 {
	w = w[:len(s)]
	for i, x := range s {
		w[i] = x - m
	}
	fallback.Exp(w, w)
	sum := float32(0)
	for _, x := range w {
		sum += x
	}
	return sum
}
