package main

import (
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func init() { register("logsoftmax", genLogSoftmaxFamily) }

// genLogSoftmaxFamily emits the two passes that LogSoftmax adds to Max:
// expSum, Σ e^(x[i] − m), and shift2, dst[i] = (x[i] − a) − b (also
// AddConstTo, with a = −c and b = 0).
func genLogSoftmaxFamily() {
	for _, s := range isas {
		genExpSum(s)
		genShift2(s)
	}
}

// genExpSum emits expSum<ISA>(x []float32, m float32) float32 = Σ e^(x[i]−m)
// for a finite m ≥ every x[i] and x free of NaN (the caller checks both with
// Max): exp without the overflow handling (applyNonPositive), lanes below
// ExpLo giving 0, two vectors and accumulators per iteration, then one
// vector, then the tail (AVX-512: an opmask load merged into −Inf; AVX2: the
// last full vector, its lanes before the tail masked off; shorter slices one
// element at a time).
func genExpSum(s *isa) {
	name := s.name("expSum")
	TEXT(name, NOSPLIT, "func(x []float32, m float32) float32")
	Doc(name + " returns Σ e^(x[i]−m) for a finite m ≥ max x and x free of NaN.")
	x := load(Param("x").Base())
	n := load(Param("x").Len())
	e := newExpGen(s)
	// No keep: on AVX2 the resident constants and this loop's vectors would
	// need more than 16 YMM (TestAVX2RegistersVEX).
	mx := XMM()
	Load(Param("m"), mx)
	negM := s.vec()
	negate(mx, negM)
	lbl := func(l string) string { return "expSum" + l }
	acc0, acc1 := s.vec(), s.vec()
	s.zero(acc0)
	s.zero(acc1)
	if !s.wide {
		CMPQ(n, U32(s.lanes))
		JB(LabelRef(lbl("scalar")))
	}
	i, lim := GP64(), GP64()
	XORQ(i, i)
	MOVQ(n, lim)
	ANDQ(I32(-2*s.lanes), lim)
	Label(lbl("pair"))
	CMPQ(i, lim)
	JAE(LabelRef(lbl("single")))
	v0, v1 := s.vec(), s.vec()
	VADDPS(Mem{Base: x, Index: i, Scale: 4}, negM, v0)
	VADDPS(Mem{Base: x, Index: i, Scale: 4, Disp: s.bytes()}, negM, v1)
	VADDPS(e.applyNonPositive(v0), acc0, acc0)
	VADDPS(e.applyNonPositive(v1), acc1, acc1)
	ADDQ(U32(2*s.lanes), i)
	JMP(LabelRef(lbl("pair")))
	Label(lbl("single"))
	MOVQ(n, lim)
	ANDQ(I32(-s.lanes), lim)
	CMPQ(i, lim)
	JAE(LabelRef(lbl("tail")))
	v := s.vec()
	VADDPS(Mem{Base: x, Index: i, Scale: 4}, negM, v)
	VADDPS(e.applyNonPositive(v), acc0, acc0)
	ADDQ(U32(s.lanes), i)
	Label(lbl("tail"))
	rem := GP64()
	MOVQ(n, rem)
	SUBQ(i, rem)
	JZ(LabelRef(lbl("reduce")))
	t := s.tailMask(rem)
	w := s.vec()
	if s.wide {
		VBROADCASTSS(f32Const("expSumNegInf", float32(math.Inf(-1))), w)
		VMOVUPS(Mem{Base: x, Index: i, Scale: 4}, t.k, w)
		VADDPS(negM, w, w)
		VADDPS(e.applyNonPositive(w), acc1, acc1)
	} else {
		VMOVUPS(Mem{Base: x, Index: n, Scale: 4, Disp: -s.bytes()}, w)
		VADDPS(negM, w, w)
		p := e.applyNonPositive(w)
		VANDPS(t.y, p, p) // only its last rem lanes are new
		VADDPS(p, acc1, acc1)
	}
	Label(lbl("reduce"))
	VADDPS(acc1, acc0, acc0)
	r := s.hsum(acc0)
	Store(r, ReturnIndex(0))
	VZEROUPPER()
	RET()
	if s.wide {
		return
	}
	// Fewer than one vector: one element at a time, summed in lane 0.
	Label(lbl("scalar"))
	sum := XMM()
	VXORPS(sum, sum, sum)
	TESTQ(n, n)
	JZ(LabelRef(lbl("scalarDone")))
	Label(lbl("scalarLoop"))
	u := s.vec()
	VMOVSS(Mem{Base: x}, u.AsX())
	VADDPS(negM, u, u)
	VADDSS(e.applyNonPositive(u).AsX(), sum, sum)
	ADDQ(U32(4), x)
	DECQ(n)
	JNZ(LabelRef(lbl("scalarLoop")))
	Label(lbl("scalarDone"))
	Store(sum, ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// genShift2 emits shift2<ISA>(dst, x []float32, a, b float32), dst[i] =
// (x[i] − a) − b, each subtraction rounded; len(dst) ≥ len(x), dst may be x.
// The loop structure is genElementwise's.
func genShift2(s *isa) {
	name := s.name("shift2")
	TEXT(name, NOSPLIT, "func(dst, x []float32, a, b float32)")
	Doc(name + " sets dst[i] = (x[i] − a) − b for i < len(x); len(dst) ≥ len(x), dst may be x.")
	dst := load(Param("dst").Base())
	x := load(Param("x").Base())
	n := load(Param("x").Len())
	a, b := s.broadcast("a"), s.broadcast("b")
	f := func(vs ...VecVirtual) []VecVirtual {
		for _, v := range vs {
			VSUBPS(a, v, v)
			VSUBPS(b, v, v)
		}
		return vs
	}
	lbl := func(l string) string { return "shift2" + l }
	if !s.wide {
		CMPQ(n, U32(s.lanes))
		JB(LabelRef(lbl("scalar")))
		last := s.vec()
		VMOVUPS(Mem{Base: x, Index: n, Scale: 4, Disp: -s.bytes()}, last)
		end := GP64()
		LEAQ(Mem{Base: dst, Index: n, Scale: 4, Disp: -s.bytes()}, end)
		i := elementwiseVectors(s, lbl, f, dst, x, n)
		CMPQ(i, n)
		JAE(LabelRef(lbl("done")))
		VMOVUPS(f(last)[0], Mem{Base: end})
		Label(lbl("done"))
		VZEROUPPER()
		RET()
		Label(lbl("scalar"))
		TESTQ(n, n)
		JZ(LabelRef(lbl("scalarDone")))
		Label(lbl("scalarLoop"))
		w := XMM()
		VMOVSS(Mem{Base: x}, w)
		VSUBSS(a.AsX(), w, w)
		VSUBSS(b.AsX(), w, w)
		VMOVSS(w, Mem{Base: dst})
		ADDQ(U32(4), x)
		ADDQ(U32(4), dst)
		DECQ(n)
		JNZ(LabelRef(lbl("scalarLoop")))
		Label(lbl("scalarDone"))
		VZEROUPPER()
		RET()
		return
	}
	i := elementwiseVectors(s, lbl, f, dst, x, n)
	rem := GP64()
	MOVQ(n, rem)
	SUBQ(i, rem)
	JZ(LabelRef(lbl("done")))
	t := s.tailMask(rem)
	w := s.vec()
	VMOVUPS_Z(Mem{Base: x, Index: i, Scale: 4}, t.k, w)
	VMOVUPS(f(w)[0], t.k, Mem{Base: dst, Index: i, Scale: 4})
	Label(lbl("done"))
	VZEROUPPER()
	RET()
}
