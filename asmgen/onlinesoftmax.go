package main

import (
	"math"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func init() { register("onlinesoftmax", genOnlineSoftmaxFamily) }

func genOnlineSoftmaxFamily() {
	for _, s := range isas {
		genOnlineSoftmax(s)
	}
	for _, s := range isas {
		genOnlineSoftmaxBand(s)
	}
}

// genOnlineSoftmax emits onlineSoftmax<ISA>(x []float32, m float32) (float32,
// float32, int), one block of an online softmax in two passes over x: the
// maximum m' = max(m, max x); then x = exp(x − m') in place, summed. It
// returns m', the sum and softmaxDone. It returns softmaxSpecial without
// writing anything when m' is not finite (and, on AVX2, when x is shorter
// than a vector), and softmaxNaN (x clobbered) when x holds a NaN; the Go
// wrapper (kernels/onlinesoftmax.go) finishes both. m must not be NaN.
//
// The passes are softmax's (softmaxMax, softmaxExpSum): the same bits as
// x + (−m') and Exp.
func genOnlineSoftmax(s *isa) {
	name := s.name("onlineSoftmax")
	TEXT(name, NOSPLIT, "func(x []float32, m float32) (float32, float32, int)")
	asm.Doc(name+" sets m' = max(m, max x) and x[i] = e^(x[i]−m'), and returns m', Σx and 0",
		"when m' is finite; it returns status 1 (nothing written) when m' is not finite",
		"or, on AVX2, len(x) is below one vector, and 2 (x clobbered) when x holds a NaN.",
		"m is not NaN.")
	x := load(asm.Param("x").Base())
	n := load(asm.Param("x").Len())
	minLen := 1
	if !s.evex {
		minLen = s.lanes // softmaxMax reads the last whole vector for the tail
	}
	asm.CMPQ(n, U32(minLen))
	asm.JB(LabelRef("special"))
	var stash Mem
	if !s.evex {
		stash = asm.AllocLocal(s.bytes())
	}
	rem, k := s.remTail(n)

	// Pass 1: m' = max(m, max x). VMAXSS returns its second source m when
	// either is NaN; a NaN of x lost here is found by pass 2.
	mx := softmaxMax(s, x, n, rem, k, nil)
	asm.VMAXSS(paramAddr("m"), mx, mx) // VEX: no legacy-SSE load after a 256-bit write
	jumpUnlessFinite(mx, "special")

	// Pass 2: x = exp(x − m'), summed; a NaN in x jumps to nan.
	negM := s.vec()
	negate(mx, negM)
	total := softmaxExpSum(s, x, x, n, rem, k, negM, stash)
	// VEX stores: asm.Store's MOVSS is legacy SSE (see isa.broadcast).
	for i, v := range []VecVirtual{mx, total} {
		b, err := asm.ReturnIndex(i).Resolve()
		if err != nil {
			panic(err)
		}
		asm.VMOVSS(v.AsX(), b.Addr)
	}
	onlineSoftmaxReturn(softmaxDone)

	asm.Label("special")
	onlineSoftmaxReturn(softmaxSpecial)
	asm.Label("nan")
	onlineSoftmaxReturn(softmaxNaN)
}

// onlineSoftmaxReturn emits the return of status code (the floats are left
// as they are unless stored before).
func onlineSoftmaxReturn(code int) {
	status := asm.GP64()
	asm.MOVQ(U32(code), status)
	asm.Store(status, asm.ReturnIndex(2))
	asm.VZEROUPPER()
	asm.RET()
}

// genOnlineSoftmaxBand emits onlineSoftmaxBand<ISA>(x []float32, rows, cols,
// stride, d int, m, sum []float32) int: genOnlineSoftmax's block on each of
// rows rows of x (row i at x[i·stride:]), row i holding its first
// n = min(cols, max(0, d+i)) scores. For a row it sets x[:n] = e^(x−m'),
// m[i] = m' and sum[i] = Σ, and zeroes x[n:cols]; n = 0 leaves m[i], sets
// sum[i] = 0 and zeroes the row. A row it cannot finish gets sum[i] = NaN, is
// counted in the result and keeps x[n:cols] as it was: when m' is not finite
// (m[i] NaN or ±Inf, or an x of ±Inf) and, on AVX2, when 0 < n < one vector,
// nothing of the row nor m[i] is written; when x holds a NaN, x is clobbered
// and m[i] set to NaN. The Go wrapper (kernels/onlinesoftmax.go) finishes
// those rows. d+i must not overflow.
//
// The rows are software-pipelined: the maximum of row i is taken before the
// exponentials of row i−1, so the reduction of one row's maximum and of the
// other's sum run beside the other's vector work instead of draining the
// pipeline once per row.
func genOnlineSoftmaxBand(s *isa) {
	name := s.name("onlineSoftmaxBand")
	TEXT(name, NOSPLIT, "func(x []float32, rows, cols, stride, d int, m, sum []float32) int")
	asm.Doc(name+" folds rows rows of x (row i at x[i·stride:], its first",
		"min(cols, max(0, d+i)) scores) into the running maxima m and sets sum, as",
		"onlineSoftmax"+s.suffix+" each, zeroing each row past its scores; rows it",
		"cannot finish get sum[i] = NaN (m[i] = NaN when x holds a NaN) and are counted",
		"in the result.")
	var stash Mem
	if !s.evex {
		stash = asm.AllocLocal(s.bytes())
	}
	rowp := load(asm.Param("x").Base())
	mp := load(asm.Param("m").Base())
	sp := load(asm.Param("sum").Base())
	strideBytes := load(asm.Param("stride"))
	asm.SHLQ(U8(2), strideBytes)
	marked, i := asm.GP64(), asm.GP64()
	asm.XORQ(marked, marked)
	asm.XORQ(i, i)
	rowPrev, nCur, nPrev := asm.GP64(), asm.GP64(), asm.GP64()
	asm.XORQ(nCur, nCur)
	mCur, mNext := asm.XMM(), asm.XMM()
	asm.VXORPS(mNext, mNext, mNext)

	// Iteration i takes the maximum of row i (i < rows), then the
	// exponentials of row i−1 (i > 0).
	asm.Label("bandRow")
	asm.CMPQ(i, paramAddr("rows"))
	asm.JAE(LabelRef("bandExp"))
	// nCur = min(cols, max(0, d+i))
	zero := asm.GP64()
	asm.XORQ(zero, zero)
	asm.MOVQ(paramAddr("d"), nCur)
	asm.ADDQ(i, nCur)
	asm.CMPQ(nCur, zero)
	asm.CMOVQLT(zero, nCur)
	asm.CMPQ(nCur, paramAddr("cols"))
	asm.CMOVQGT(paramAddr("cols"), nCur)
	asm.VMOVSS(Mem{Base: mp, Index: i, Scale: 4}, mNext)
	asm.TESTQ(nCur, nCur)
	asm.JZ(LabelRef("bandExp"))
	if !s.evex {
		// softmaxMax and softmaxExpSum read whole vectors: a shorter row is
		// left to the Go wrapper (mNext NaN fails the check below).
		asm.CMPQ(nCur, U32(s.lanes))
		asm.JAE(LabelRef("bandMax"))
		asm.VMOVSS(f32Const("softmaxNaN", float32(math.NaN())), mNext)
		asm.JMP(LabelRef("bandExp"))
		asm.Label("bandMax")
	}
	{
		rem, k := s.remTail(nCur)
		mx := softmaxMax(s, rowp, nCur, rem, k, nil)
		asm.VMAXSS(Mem{Base: mp, Index: i, Scale: 4}, mx, mx)
		asm.VMOVAPS(mx, mNext)
	}

	asm.Label("bandExp")
	asm.TESTQ(i, i)
	asm.JZ(LabelRef("bandNext"))
	j := asm.GP64()
	asm.LEAQ(Mem{Base: i, Disp: -1}, j)
	start := asm.GP64() // the first element of row j to zero
	asm.XORQ(start, start)
	asm.TESTQ(nPrev, nPrev)
	asm.JNZ(LabelRef("bandFinite"))
	asm.MOVL(U32(0), Mem{Base: sp, Index: j, Scale: 4})
	asm.JMP(LabelRef("bandZero"))

	asm.Label("bandFinite")
	jumpUnlessFinite(mCur, "bandMark")
	{
		negM := s.vec()
		negate(mCur, negM)
		rem, k := s.remTail(nPrev)
		total := softmaxExpSum(s, rowPrev, rowPrev, nPrev, rem, k, negM, stash)
		asm.VMOVSS(mCur, Mem{Base: mp, Index: j, Scale: 4})
		asm.VMOVSS(total, Mem{Base: sp, Index: j, Scale: 4})
		asm.MOVQ(nPrev, start)
	}

	// Zero row j from start to cols: whole vectors, then single floats.
	asm.Label("bandZero")
	{
		z := s.vec()
		s.zero(z)
		end := asm.GP64()
		asm.MOVQ(paramAddr("cols"), end)
		asm.SUBQ(U32(s.lanes), end)
		asm.Label("bandZeroVector")
		asm.CMPQ(start, end)
		asm.JG(LabelRef("bandZeroTail"))
		asm.VMOVUPS(z, Mem{Base: rowPrev, Index: start, Scale: 4})
		asm.ADDQ(U32(s.lanes), start)
		asm.JMP(LabelRef("bandZeroVector"))
		asm.Label("bandZeroTail")
		asm.CMPQ(start, paramAddr("cols"))
		asm.JAE(LabelRef("bandNext"))
		asm.MOVL(U32(0), Mem{Base: rowPrev, Index: start, Scale: 4})
		asm.INCQ(start)
		asm.JMP(LabelRef("bandZeroTail"))
	}

	// x held a NaN: m' is NaN.
	asm.Label("nan")
	asm.MOVL(U32(0x7fc00000), Mem{Base: mp, Index: j, Scale: 4})
	asm.Label("bandMark")
	asm.MOVL(U32(0x7fc00000), Mem{Base: sp, Index: j, Scale: 4})
	asm.INCQ(marked)

	asm.Label("bandNext")
	asm.VMOVAPS(mNext, mCur)
	asm.MOVQ(nCur, nPrev)
	asm.MOVQ(rowp, rowPrev)
	asm.ADDQ(strideBytes, rowp)
	asm.INCQ(i)
	asm.CMPQ(i, paramAddr("rows"))
	asm.JBE(LabelRef("bandRow"))
	asm.Store(marked, asm.ReturnIndex(0))
	asm.VZEROUPPER()
	asm.RET()
}

// remTail returns n mod lanes in a new register and, for AVX-512, the opmask
// of that many lanes (all-zero when it is 0); AVX2 callers handle the tail
// otherwise.
func (s *isa) remTail(n GPVirtual) (GPVirtual, tail) {
	rem := asm.GP64()
	asm.MOVQ(n, rem)
	asm.ANDQ(U32(s.lanes-1), rem)
	var k tail
	if s.evex {
		k = s.tailMask(rem)
	}
	return rem, k
}

// jumpUnlessFinite jumps to label unless the float in lane 0 of v is finite:
// v − v is 0 for a finite v and NaN for ±Inf and NaN.
func jumpUnlessFinite(v VecVirtual, label string) {
	t := asm.XMM()
	asm.VSUBSS(v, v, t)
	asm.VUCOMISS(t, t)
	asm.JP(LabelRef(label))
}
