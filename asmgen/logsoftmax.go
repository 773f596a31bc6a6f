package main

import (
	"math"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func init() { register("logsoftmax", genLogSoftmaxFamily) }

// genLogSoftmaxFamily emits the two passes that LogSoftmax adds to Max:
// expSum, Σ e^(x[i] − m), and shift2, dst[i] = (x[i] − a) − b.
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
	asm.Doc(name + " returns Σ e^(x[i]−m) for a finite m ≥ max x and x free of NaN.")
	x := load(asm.Param("x").Base())
	n := load(asm.Param("x").Len())
	e := newExpGen(s)
	// No keep: on AVX2 the resident constants and this loop's vectors would
	// need more than 16 YMM (TestAVX2RegistersVEX).
	mx := asm.XMM()
	asm.VMOVSS(paramAddr("m"), mx)
	negM := s.vec()
	negate(mx, negM)
	lbl := func(l string) string { return "expSum" + l }
	acc0, acc1 := s.vec(), s.vec()
	s.zero(acc0)
	s.zero(acc1)
	if !s.evex {
		asm.CMPQ(n, U32(s.lanes))
		asm.JB(LabelRef(lbl("scalar")))
	}
	i, lim := asm.GP64(), asm.GP64()
	asm.XORQ(i, i)
	asm.MOVQ(n, lim)
	asm.ANDQ(I32(-2*s.lanes), lim)
	asm.Label(lbl("pair"))
	asm.CMPQ(i, lim)
	asm.JAE(LabelRef(lbl("single")))
	v0, v1 := s.vec(), s.vec()
	asm.VADDPS(Mem{Base: x, Index: i, Scale: 4}, negM, v0)
	asm.VADDPS(Mem{Base: x, Index: i, Scale: 4, Disp: s.bytes()}, negM, v1)
	asm.VADDPS(e.applyNonPositive(v0), acc0, acc0)
	asm.VADDPS(e.applyNonPositive(v1), acc1, acc1)
	asm.ADDQ(U32(2*s.lanes), i)
	asm.JMP(LabelRef(lbl("pair")))
	asm.Label(lbl("single"))
	asm.MOVQ(n, lim)
	asm.ANDQ(I32(-s.lanes), lim)
	asm.CMPQ(i, lim)
	asm.JAE(LabelRef(lbl("tail")))
	v := s.vec()
	asm.VADDPS(Mem{Base: x, Index: i, Scale: 4}, negM, v)
	asm.VADDPS(e.applyNonPositive(v), acc0, acc0)
	asm.ADDQ(U32(s.lanes), i)
	asm.Label(lbl("tail"))
	rem := asm.GP64()
	asm.MOVQ(n, rem)
	asm.SUBQ(i, rem)
	asm.JZ(LabelRef(lbl("reduce")))
	t := s.tailMask(rem)
	w := s.vec()
	if s.evex {
		asm.VBROADCASTSS(f32Const("expSumNegInf", float32(math.Inf(-1))), w)
		asm.VMOVUPS(Mem{Base: x, Index: i, Scale: 4}, t.k, w)
		asm.VADDPS(negM, w, w)
		asm.VADDPS(e.applyNonPositive(w), acc1, acc1)
	} else {
		asm.VMOVUPS(Mem{Base: x, Index: n, Scale: 4, Disp: -s.bytes()}, w)
		asm.VADDPS(negM, w, w)
		p := e.applyNonPositive(w)
		asm.VANDPS(t.y, p, p) // only its last rem lanes are new
		asm.VADDPS(p, acc1, acc1)
	}
	asm.Label(lbl("reduce"))
	asm.VADDPS(acc1, acc0, acc0)
	r := s.hsum(acc0)
	vexStoreReturn(r)
	asm.VZEROUPPER()
	asm.RET()
	if s.evex {
		return
	}
	// Fewer than one vector: one element at a time, summed in lane 0.
	asm.Label(lbl("scalar"))
	sum := asm.XMM()
	asm.VXORPS(sum, sum, sum)
	asm.TESTQ(n, n)
	asm.JZ(LabelRef(lbl("scalarDone")))
	asm.Label(lbl("scalarLoop"))
	u := s.vec()
	asm.VMOVSS(Mem{Base: x}, u.AsX())
	asm.VADDPS(negM, u, u)
	asm.VADDSS(e.applyNonPositive(u).AsX(), sum, sum)
	asm.ADDQ(U32(4), x)
	asm.DECQ(n)
	asm.JNZ(LabelRef(lbl("scalarLoop")))
	asm.Label(lbl("scalarDone"))
	vexStoreReturn(sum)
	asm.VZEROUPPER()
	asm.RET()
}

// genShift2 emits shift2<ISA>(dst, x []float32, a, b float32), dst[i] =
// (x[i] − a) − b, each subtraction rounded; len(dst) ≥ len(x), dst may be x.
// The loop structure is genElementwise's.
func genShift2(s *isa) {
	name := s.name("shift2")
	TEXT(name, NOSPLIT, "func(dst, x []float32, a, b float32)")
	asm.Doc(name + " sets dst[i] = (x[i] − a) − b for i < len(x); len(dst) ≥ len(x), dst may be x.")
	dst := load(asm.Param("dst").Base())
	x := load(asm.Param("x").Base())
	n := load(asm.Param("x").Len())
	a, b := s.broadcast("a"), s.broadcast("b")
	f := func(vs ...VecVirtual) []VecVirtual {
		for _, v := range vs {
			asm.VSUBPS(a, v, v)
			asm.VSUBPS(b, v, v)
		}
		return vs
	}
	lbl := func(l string) string { return "shift2" + l }
	if !s.evex {
		asm.CMPQ(n, U32(s.lanes))
		asm.JB(LabelRef(lbl("scalar")))
		last := s.vec()
		asm.VMOVUPS(Mem{Base: x, Index: n, Scale: 4, Disp: -s.bytes()}, last)
		end := asm.GP64()
		asm.LEAQ(Mem{Base: dst, Index: n, Scale: 4, Disp: -s.bytes()}, end)
		i := elementwiseVectors(s, lbl, f, dst, x, n)
		asm.CMPQ(i, n)
		asm.JAE(LabelRef(lbl("done")))
		asm.VMOVUPS(f(last)[0], Mem{Base: end})
		asm.Label(lbl("done"))
		asm.VZEROUPPER()
		asm.RET()
		asm.Label(lbl("scalar"))
		asm.TESTQ(n, n)
		asm.JZ(LabelRef(lbl("scalarDone")))
		asm.Label(lbl("scalarLoop"))
		w := asm.XMM()
		asm.VMOVSS(Mem{Base: x}, w)
		asm.VSUBSS(a.AsX(), w, w)
		asm.VSUBSS(b.AsX(), w, w)
		asm.VMOVSS(w, Mem{Base: dst})
		asm.ADDQ(U32(4), x)
		asm.ADDQ(U32(4), dst)
		asm.DECQ(n)
		asm.JNZ(LabelRef(lbl("scalarLoop")))
		asm.Label(lbl("scalarDone"))
		asm.VZEROUPPER()
		asm.RET()
		return
	}
	i := elementwiseVectors(s, lbl, f, dst, x, n)
	rem := asm.GP64()
	asm.MOVQ(n, rem)
	asm.SUBQ(i, rem)
	asm.JZ(LabelRef(lbl("done")))
	t := s.tailMask(rem)
	w := s.vec()
	asm.VMOVUPS_Z(Mem{Base: x, Index: i, Scale: 4}, t.k, w)
	asm.VMOVUPS(f(w)[0], t.k, Mem{Base: dst, Index: i, Scale: 4})
	asm.Label(lbl("done"))
	asm.VZEROUPPER()
	asm.RET()
}

// vexStoreReturn stores the float32 in lane 0 of x as the first result with
// the VEX VMOVSS: asm.Store's MOVSS is legacy SSE, see isa.broadcast.
func vexStoreReturn(x VecVirtual) {
	b, err := asm.ReturnIndex(0).Resolve()
	if err != nil {
		panic(err)
	}
	asm.VMOVSS(x.AsX(), b.Addr)
}
