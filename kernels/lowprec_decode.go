package kernels

import (
	mathbits "math/bits"
	"strconv"

	"github.com/heedml/heed/internal/fallback"
)

// Format is the element format of a Stored matrix.
type Format uint8

const (
	FormatBF16 Format = iota + 1 // BF16 elements: 2 bytes each
	FormatF16                    // F16 (IEEE binary16) elements: 2 bytes each
	FormatQ8                     // Q8Block elements: 36 bytes per 32 values of a row
)

var formatNames = [...]string{FormatBF16: "bf16", FormatF16: "f16", FormatQ8: "q8"}

// String returns the format's name: bf16, f16 or q8.
func (f Format) String() string {
	if f >= FormatBF16 && f <= FormatQ8 {
		return formatNames[f]
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}

// Element is the element type of a reduced-precision Format.
type Element interface{ BF16 | F16 | Q8Block }

// Stored is a row-major matrix of Rows×Cols values held in a reduced-precision
// Format: BF16 or F16 elements, element (i, j) at data[i·Stride + j], or
// Q8Block elements, row i the Q8Blocks(Cols) blocks from data[i·Stride] (the
// stride counted in blocks), element (i, j) the value j mod 32 of block
// i·Stride + j/32. A Stored refers to its data; it does not copy it. Its
// fields are set by StoredOf or NewStored, which check them, so every
// Stored is valid; the zero value is an empty matrix. The kernels read only
// the Rows×Cols values (for Q8, the last block of a row as a whole, whose
// values past Cols are never weighted) and never the padding between rows.
type Stored struct {
	format          Format
	rows, cols, lda int
	u16             []uint16
	q8              []Q8Block
	hq              []Q8Block // the Q8Q8 step's quantised query (keys only), or nil
}

// StoredOf returns the rows×cols matrix in data at the given stride (in
// elements, in blocks for Q8Block), in the format of data's element type. It
// panics, naming the sizes, unless rows, cols ≥ 0, stride ≥ the elements of
// a row (cols, or Q8Blocks(cols)) when rows > 1, and len(data) holds every
// row.
func StoredOf[T Element](rows, cols, stride int, data []T) Stored {
	m := Stored{rows: rows, cols: cols, lda: stride}
	switch d := any(data).(type) {
	case []BF16:
		m.format, m.u16 = FormatBF16, u16s(d)
	case []F16:
		m.format, m.u16 = FormatF16, u16s(d)
	case []Q8Block:
		m.format, m.q8 = FormatQ8, d
	}
	checkShape("StoredOf", "data", rows, cols, stride, m.width(), len(data))
	return m
}

// NewStored returns a new matrix holding a in format f (ToBF16, ToF16 or ToQ8
// row by row), its stride the elements of a row. It panics if a is not a
// valid Matrix or f is not a Format.
func NewStored(f Format, a Matrix) Stored {
	a.check("NewStored", "a")
	m := Stored{format: f, rows: a.Rows, cols: a.Cols}
	m.lda = m.width()
	switch f {
	case FormatBF16:
		d := make([]BF16, a.Rows*a.Cols)
		for i := 0; i < a.Rows && a.Cols > 0; i++ {
			ToBF16(d[i*a.Cols:(i+1)*a.Cols], a.Row(i))
		}
		m.u16 = u16s(d)
	case FormatF16:
		d := make([]F16, a.Rows*a.Cols)
		for i := 0; i < a.Rows && a.Cols > 0; i++ {
			ToF16(d[i*a.Cols:(i+1)*a.Cols], a.Row(i))
		}
		m.u16 = u16s(d)
	case FormatQ8:
		nb := m.lda
		m.q8 = make([]Q8Block, a.Rows*nb)
		for i := 0; i < a.Rows && a.Cols > 0; i++ {
			ToQ8(m.q8[i*nb:(i+1)*nb], a.Row(i))
		}
	default:
		panicf("NewStored: %v is not a Format", f)
	}
	return m
}

// Format returns the matrix's element format.
func (m Stored) Format() Format { return m.format }

// Rows returns the number of rows.
func (m Stored) Rows() int { return m.rows }

// Cols returns the number of columns (values per row).
func (m Stored) Cols() int { return m.cols }

// Stride returns the distance between rows, in elements (blocks for Q8).
func (m Stored) Stride() int { return m.lda }

// SliceRows returns rows [lo, hi) of m as a Stored of the same format and
// stride. It panics unless 0 ≤ lo ≤ hi ≤ m.Rows().
func (m Stored) SliceRows(lo, hi int) Stored {
	if lo < 0 || hi < lo || hi > m.rows {
		panicf("Stored.SliceRows: [%d, %d) out of range [0, %d]", lo, hi, m.rows)
	}
	s := m
	s.rows = hi - lo
	if s.rows == 0 || s.cols == 0 {
		s.u16, s.q8 = nil, nil
		return s
	}
	n := (hi-lo-1)*m.lda + m.width()
	if m.format == FormatQ8 {
		s.q8 = m.q8[lo*m.lda : lo*m.lda+n]
	} else {
		s.u16 = m.u16[lo*m.lda : lo*m.lda+n]
	}
	return s
}

// width returns the elements (blocks for Q8) a row of m occupies.
func (m Stored) width() int {
	if m.format == FormatQ8 {
		return Q8Blocks(m.cols)
	}
	return m.cols
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
		panicf("%s: %s is %d×%d with stride %d: len(%s)=%d < %d", kernel, name, rows, cols, stride, name, have, need)
	}
}

// MatVecStored sets dst = A·x for a stored matrix A, in float32 on the stored
// values Â. BF16 and F16: each dst[r] is within γₙ·Σ_c|Â[r,c]·x[c]| (n =
// a.Cols()) of the exact product of Â, as MatVec on the widened matrix. Q8:
// each dst[r] is Σ_b Scale_b·(Σ_i Q_b[i]·x[32b+i]), within
// γₙ₊₂·Σ_c|Â[r,c]·x[c]| (one more rounding per term, for the scale); a block
// with a NaN scale makes its row's result NaN. Against the float32 matrix A
// that was stored, add Σ_c|Â[r,c] − A[r,c]|·|x[c]| (the format's storage
// bound). It panics unless len(dst) = a.Rows() and len(x) = a.Cols(), and if
// dst overlaps x. No allocation; safe for concurrent use on disjoint dst.
func MatVecStored(dst []float32, a Stored, x []float32) {
	if len(dst) != a.rows || len(x) != a.cols {
		panicf("MatVecStored: a is %d×%d but len(dst)=%d, len(x)=%d", a.rows, a.cols, len(dst), len(x))
	}
	checkDisjoint("MatVecStored", "dst", dst, "x", x)
	if a.rows == 0 {
		return
	}
	if a.cols == 0 {
		clear(dst)
		return
	}
	a.scoreRows(dst, 0, x)
}

// MatTVecStored sets dst = Aᵀ·x for a stored matrix A: MatTVecStoredAdd on a
// cleared dst, with its panics, bound (dst = 0) and special values.
func MatTVecStored(dst []float32, a Stored, x []float32) {
	checkMatTVecStored("MatTVecStored", dst, a, x)
	clear(dst)
	if a.rows > 0 && a.cols > 0 {
		a.addRows(dst, 0, x)
	}
}

// MatTVecStoredAdd sets dst += Aᵀ·x for a stored matrix A: the x-weighted sum
// of its rows (the context of an attention step). Each dst[c] is within
// γₙ₊₁·(|dst[c]| + Σᵣ|x[r]·Â[r,c]|) (n = a.Rows()) of the exact result on the
// stored values, as MatTVecAdd, for BF16 and F16; Q8 rounds each row's weight
// x[r]·Scale once per block, then multiplies Q: γₙ₊₂. Against the float32
// matrix, add Σᵣ|x[r]|·|Â[r,c] − A[r,c]|. It panics unless len(dst) =
// a.Cols() and len(x) = a.Rows(), and if dst overlaps x. No allocation; safe
// for concurrent use on disjoint dst.
func MatTVecStoredAdd(dst []float32, a Stored, x []float32) {
	checkMatTVecStored("MatTVecStoredAdd", dst, a, x)
	if a.rows > 0 && a.cols > 0 {
		a.addRows(dst, 0, x)
	}
}

func checkMatTVecStored(kernel string, dst []float32, a Stored, x []float32) {
	if len(dst) != a.cols || len(x) != a.rows {
		panicf("%s: a is %d×%d but len(dst)=%d, len(x)=%d", kernel, a.rows, a.cols, len(dst), len(x))
	}
	checkDisjoint(kernel, "dst", dst, "x", x)
}

// DotSoftmaxMatTVecStored is one streaming pass of a dot-product attention
// step over keys k and values v stored in one reduced-precision format, the
// query h and the context ctx in float32 (pass the same matrix as k and v
// when the keys are the values). It sets scores = K·h and, with (m, l) = *st
// and M the larger of m and the largest score,
//
//	ctx = e^(m−M)·ctx + Σᵣ e^(scores[r]−M)·V[r,·]
//	*st = {M, e^(m−M)·l + Σᵣ e^(scores[r]−M)},
//
// as DotSoftmaxMatTVec does for one float32 matrix: from st = {−Inf, 0} and
// ctx = 0, calls over consecutive blocks of rows leave the softmax as
// e^(scores[r]−st.Max)/st.Sum and the context as ctx/st.Sum, each row of K
// and V read once. The rows go in blocks: their scores (as MatVecStored), a
// rescaling of ctx and the sum when the block raises the maximum, their
// weights by the vector exponential of Exp, then the weighted values (as
// MatTVecStoredAdd). On AVX2 and AVX-512, when len(h) and len(ctx) are
// multiples of 8 (of 32 for Q8), one kernel takes the blocks of eight rows
// and the rest go as on other CPUs (blocks of up to 32 KiB of keys and
// values).
//
// Accuracy on the stored values: each score within MatVecStored's bound; each
// weight within Exp's bound of e to its rounded argument, off by |score−M|·u
// (u = 2⁻²⁴); each rescaling adds one rounding, its factor's error and
// |m−M|·u (one per block that raises the maximum); the weighted sum within
// MatTVecStoredAdd's bound. Against float32 keys and values, add their
// storage rounding to the scores and the context. A Q8 key block with a NaN
// scale gives a NaN score.
//
// It returns false as soon as a score is NaN or ±Inf, leaving ctx, scores and
// *st partly updated: the caller then takes the softmax's special-value rules
// (Softmax, then MatTVecStoredAdd).
//
// It panics unless k and v have the same format, len(scores) = k.Rows() =
// v.Rows(), len(h) = k.Cols(), len(ctx) = v.Cols() and st is not nil, and if
// ctx, scores and h overlap. No allocation; safe for concurrent use on
// distinct outputs.
func DotSoftmaxMatTVecStored(ctx, scores []float32, k, v Stored, h []float32, st *SoftmaxState) bool {
	const name = "DotSoftmaxMatTVecStored"
	stepFormats(name, k, v, st)
	stepShape(name, ctx, scores, h, k.rows, k.cols, v.rows, v.cols)
	checkStepAlias(name, ctx, scores, h, nil, nil)
	return decodeStep(ctx, scores, k, v, h, st)
}

// stepFormats panics unless k and v have one format (or v is empty) and st is
// not nil.
func stepFormats(kernel string, k, v Stored, st *SoftmaxState) {
	if k.format != v.format && v.rows > 0 && v.cols > 0 && k.rows > 0 {
		panicf("%s: k is %v but v is %v; want one format", kernel, k.format, v.format)
	}
	if st == nil {
		panicf("%s: st is nil", kernel)
	}
}

func stepShape(kernel string, ctx, scores, h []float32, kr, kc, vr, vc int) {
	if len(scores) != kr || vr != kr || len(h) != kc || len(ctx) != vc {
		panicf("%s: k is %d×%d, v is %d×%d but len(scores)=%d, len(h)=%d, len(ctx)=%d",
			kernel, kr, kc, vr, vc, len(scores), len(h), len(ctx))
	}
}

// rowBytes is the number of bytes a row holds.
func (m Stored) rowBytes() int {
	if m.format == FormatQ8 {
		return 36 * Q8Blocks(m.cols)
	}
	return 2 * m.cols
}

// scoreRows sets dst = rows [r0, r0+len(dst)) times x (times m.hq if not
// nil); m.cols ≥ 1.
func (m Stored) scoreRows(dst []float32, r0 int, x []float32) {
	switch m.format {
	case FormatBF16:
		matVecBF16(dst, m.u16[r0*m.lda:], m.lda, x)
	case FormatF16:
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
func (m Stored) addRows(dst []float32, r0 int, w []float32) {
	switch m.format {
	case FormatBF16:
		matTVecBF16(dst, m.u16[r0*m.lda:], m.lda, w)
	case FormatF16:
		matTVecF16(dst, m.u16[r0*m.lda:], m.lda, w)
	default:
		matTVecQ8(dst, m.q8[r0*m.lda:], m.lda, w)
	}
}

// decodeStepKernel, when not stepBySpan, makes the fused step kernels
// (amd64) take their prefetching variant into L1 (stepPF) or L2 (stepPFL2)
// or the other (stepNear) at every size, or the step take its two passes
// (stepPasses) wherever keys and values are apart, for tests.
var decodeStepKernel = stepBySpan

const (
	stepBySpan = iota
	stepNear
	stepPF
	stepPFL2
	stepPasses
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
func decodeStep(ctx, scores []float32, k, v Stored, h []float32, st *SoftmaxState) bool {
	n := len(scores)
	if n == 0 {
		return true
	}
	if stepTwoPasses(k, v, n) {
		return decodeStepPasses(ctx, scores, k, v, h, st)
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
		raiseMax(st, ctx, m)
		w := wbuf[:len(s)]
		st.Sum += expShift(w, s, st.Max)
		if len(ctx) > 0 {
			v.addRows(ctx, r0, w)
		}
	}
	return true
}

// stepTwoPasses reports whether the step over n rows of keys k and values v
// goes in two passes (decodeStepPasses): keys and values apart, with columns,
// and either spanning beyond the route's threshold in a format it lists
// (stepPassesFor) or a test forcing it.
func stepTwoPasses(k, v Stored, n int) bool {
	if k.cols == 0 || v.cols == 0 || k.sameData(v) {
		return false
	}
	switch decodeStepKernel {
	case stepPasses:
		return true
	case stepBySpan:
		return stepPassesFor(k.format, n*(k.rowBytes()+v.rowBytes()))
	}
	return false
}

// sameData reports whether m and o start at the same element (the keys
// passed as the values).
func (m Stored) sameData(o Stored) bool {
	if m.format == FormatQ8 {
		return len(m.q8) > 0 && len(o.q8) > 0 && &m.q8[0] == &o.q8[0]
	}
	return len(m.u16) > 0 && len(o.u16) > 0 && &m.u16[0] == &o.u16[0]
}

// stepPassBlock is the rows of values whose weights the second pass of
// decodeStepPasses computes at once (a stack array).
const stepPassBlock = 1024

// decodeStepPasses is decodeStep in two passes, for keys and values apart
// beyond the caches: all the scores (one stream over the keys), their maximum
// M and the check for NaN and ±Inf, ctx and the sum rescaled once by
// e^(m−M), then the values in blocks of stepPassBlock rows (one stream),
// each block's weights e^(score−M) by Exp's kernel and added to the sum.
// Where the fused kernel alternates between blocks of keys and of values,
// each pass reads one matrix in address order.
func decodeStepPasses(ctx, scores []float32, k, v Stored, h []float32, st *SoftmaxState) bool {
	n := len(scores)
	k.scoreRows(scores, 0, h)
	m := Max(scores) // NaN if a score is NaN
	if m-m != 0 {    // NaN or +Inf
		return false
	}
	if s := Sum(scores); s-s != 0 {
		// A −Inf, or finite scores whose sum overflows: look.
		for _, x := range scores {
			if x-x != 0 {
				return false
			}
		}
	}
	raiseMax(st, ctx, m)
	var wbuf [stepPassBlock]float32
	for r0 := 0; r0 < n; r0 += stepPassBlock {
		s := scores[r0:min(n, r0+stepPassBlock)]
		w := wbuf[:len(s)]
		st.Sum += expShift(w, s, st.Max)
		v.addRows(ctx, r0, w)
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
