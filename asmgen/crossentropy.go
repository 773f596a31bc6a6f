package main

import (
	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func init() { register("crossentropy", genCrossEntropyFamily) }

func genCrossEntropyFamily() {
	for _, s := range isas {
		genCrossEntropyExp(s)
	}
}

// crossEntropyExpUnroll is the vectors per iteration of the exponential pass,
// as Softmax's (softmaxExpUnroll).
const crossEntropyExpUnroll = 2

// genCrossEntropyExp emits crossEntropyExp<ISA>(dst, x []float32, t int, m,
// scale, shift float32) (sum, dsum, et float32), the two passes that the
// fused loss adds to Max (fallback.CrossEntropyExp is the contract): for
// n = len(x) ≥ 1, a finite m = max x and x free of NaN, with
// eᵢ = e^(x[i] + (−m)) (exp's applyNonPositive), it returns Σeᵢ, Σ(x[i] − m)
// and e_t, and sets dst[i] = fma(eᵢ, c, −shift), c = scale/Σeᵢ.
//
// Pass 1 stores eᵢ into dst and sums eᵢ and x[i] − m, two vectors an
// iteration, then one, then the tail: AVX-512 an opmask tail; AVX2 the last
// full vector, computed before the loop (dst may be x), its lanes before the
// tail masked off the sums and stored after the loop; shorter rows one element
// at a time. Pass 2 is Scale's loop with VFMSUB213PS in place of VMULPS; its
// AVX2 tail, the last full vector, is likewise computed before the loop.
func genCrossEntropyExp(s *isa) {
	name := s.name("crossEntropyExp")
	TEXT(name, NOSPLIT, "func(dst, x []float32, t int, m, scale, shift float32) (sum, dsum, et float32)")
	asm.Doc(name+" sets eᵢ = e^(x[i]−m), returns Σeᵢ, Σ(x[i]−m) and e_t, and sets",
		"dst[i] = fma(eᵢ, scale/Σeᵢ, −shift); len(x) ≥ 1, m = max x finite, x free of NaN;",
		"dst may be x.")
	dst := load(asm.Param("dst").Base())
	x := load(asm.Param("x").Base())
	n := load(asm.Param("x").Len())
	e := newExpGen(s)
	mx := asm.XMM()
	asm.VMOVSS(paramAddr("m"), mx)
	negM := s.vec()
	negate(mx, negM)
	lbl := func(l string) string { return "xent" + l }
	if !s.evex {
		asm.CMPQ(n, U32(s.lanes))
		asm.JB(LabelRef(lbl("scalar")))
	}
	sums := make([]VecVirtual, crossEntropyExpUnroll)
	for i := range sums {
		sums[i] = s.vec()
		s.zero(sums[i])
	}
	dsum := s.vec()
	s.zero(dsum)
	rem := asm.GP64()
	asm.MOVQ(n, rem)
	asm.ANDQ(U32(s.lanes-1), rem)
	var stash Mem
	var k tail
	if s.evex {
		k = s.tailMask(rem) // all-zero when rem = 0
	} else {
		// The tail first, before any store: dst may be x.
		stash = asm.AllocLocal(s.bytes())
		asm.TESTQ(rem, rem)
		asm.JZ(LabelRef(lbl("expMain")))
		v := s.vec()
		asm.VADDPS(Mem{Base: x, Index: n, Scale: 4, Disp: -s.bytes()}, negM, v)
		ev := e.applyNonPositive(v)
		asm.VMOVUPS(ev, stash)
		mask := s.tailMask(rem)
		asm.VANDPS(mask.y, ev, ev)
		asm.VADDPS(ev, sums[0], sums[0])
		asm.VANDPS(mask.y, v, v)
		asm.VADDPS(v, dsum, dsum)
		asm.Label(lbl("expMain"))
	}
	p, q, c := asm.GP64(), asm.GP64(), asm.GP64()
	asm.MOVQ(x, p)
	asm.MOVQ(dst, q)
	asm.MOVQ(n, c)
	block := crossEntropyExpUnroll * s.lanes
	one := func(disp int, sum VecVirtual) {
		v := s.vec()
		asm.VADDPS(Mem{Base: p, Disp: disp}, negM, v)
		ev := e.applyNonPositive(v)
		asm.VMOVUPS(ev, Mem{Base: q, Disp: disp})
		asm.VADDPS(ev, sum, sum)
		asm.VADDPS(v, dsum, dsum)
	}

	asm.Label(lbl("expBlock"))
	asm.CMPQ(c, U32(block))
	asm.JB(LabelRef(lbl("expVector")))
	for i, sum := range sums {
		one(i*s.bytes(), sum)
	}
	asm.ADDQ(U32(block*4), p)
	asm.ADDQ(U32(block*4), q)
	asm.SUBQ(U32(block), c)
	asm.JMP(LabelRef(lbl("expBlock")))

	asm.Label(lbl("expVector"))
	asm.CMPQ(c, U32(s.lanes))
	asm.JB(LabelRef(lbl("expTail")))
	one(0, sums[0])
	asm.ADDQ(U32(s.bytes()), p)
	asm.ADDQ(U32(s.bytes()), q)
	asm.SUBQ(U32(s.lanes), c)
	asm.JMP(LabelRef(lbl("expVector")))

	asm.Label(lbl("expTail"))
	asm.TESTQ(rem, rem)
	asm.JZ(LabelRef(lbl("expReduce")))
	if s.evex {
		v := s.vec()
		asm.VMOVUPS_Z(Mem{Base: p}, k.k, v)
		asm.VADDPS(negM, v, v)
		ev := e.applyNonPositive(v)
		asm.VMOVUPS(ev, k.k, Mem{Base: q})
		asm.VADDPS(ev, sums[1], k.k, sums[1])
		asm.VADDPS(v, dsum, k.k, dsum)
	} else {
		v := s.vec()
		asm.VMOVUPS(stash, v)
		asm.VMOVUPS(v, Mem{Base: dst, Index: n, Scale: 4, Disp: -s.bytes()})
	}

	asm.Label(lbl("expReduce"))
	for i := 1; i < len(sums); i++ {
		asm.VADDPS(sums[i], sums[0], sums[0])
	}
	total := s.hsum(sums[0])
	dtotal := s.hsum(dsum)
	crossEntropyFinish(s, dst, n, total, dtotal, func(cv, bv VecVirtual) {
		// Pass 2: dst = fma(dst, c, −shift).
		var last VecVirtual
		var lastAt GPVirtual
		if !s.evex {
			last, lastAt = s.vec(), asm.GP64()
			asm.LEAQ(Mem{Base: dst, Index: n, Scale: 4, Disp: -s.bytes()}, lastAt)
			asm.VMOVUPS(Mem{Base: lastAt}, last)
			asm.VFMSUB213PS(bv, cv, last)
		}
		s.stream(lbl("grad"), n, []GPVirtual{dst}, axpyUnroll, func(j, d int, _ bool) {
			v := s.vec()
			asm.VMOVUPS(Mem{Base: dst, Disp: d}, v)
			asm.VFMSUB213PS(bv, cv, v)
			asm.VMOVUPS(v, Mem{Base: dst, Disp: d})
		})
		asm.JZ(LabelRef(lbl("gradDone")))
		if s.evex {
			t := s.tailMask(n)
			v := s.vec()
			asm.VMOVUPS_Z(Mem{Base: dst}, t.k, v)
			asm.VFMSUB213PS(bv, cv, v)
			asm.VMOVUPS(v, t.k, Mem{Base: dst})
		} else {
			asm.VMOVUPS(last, Mem{Base: lastAt})
		}
		asm.Label(lbl("gradDone"))
	})
	if s.evex {
		return
	}

	// Fewer than one vector: one element at a time in lane 0 (VMOVSS
	// zeroes the other lanes), summed in lane 0.
	asm.Label(lbl("scalar"))
	sum, ds := asm.XMM(), asm.XMM()
	asm.VXORPS(sum, sum, sum)
	asm.VXORPS(ds, ds, ds)
	i := asm.GP64()
	asm.XORQ(i, i)
	asm.Label(lbl("scalarExp"))
	u := s.vec()
	asm.VMOVSS(Mem{Base: x, Index: i, Scale: 4}, u.AsX())
	asm.VADDPS(negM, u, u)
	ev := e.applyNonPositive(u)
	asm.VMOVSS(ev.AsX(), Mem{Base: dst, Index: i, Scale: 4})
	asm.VADDSS(ev.AsX(), sum, sum)
	asm.VADDSS(u.AsX(), ds, ds)
	asm.INCQ(i)
	asm.CMPQ(i, n)
	asm.JB(LabelRef(lbl("scalarExp")))
	crossEntropyFinish(s, dst, n, sum, ds, func(cv, bv VecVirtual) {
		j := asm.GP64()
		asm.XORQ(j, j)
		asm.Label(lbl("scalarGrad"))
		w := asm.XMM()
		asm.VMOVSS(Mem{Base: dst, Index: j, Scale: 4}, w)
		asm.VFMSUB213SS(bv.AsX(), cv.AsX(), w)
		asm.VMOVSS(w, Mem{Base: dst, Index: j, Scale: 4})
		asm.INCQ(j)
		asm.CMPQ(j, n)
		asm.JB(LabelRef(lbl("scalarGrad")))
	})
}

// crossEntropyFinish emits the end of crossEntropyExp after its exponential
// pass, whose sums are in lane 0 of total and dtotal: e_t loaded from dst,
// c = scale/total and −shift broadcast into vectors for grad, which emits the
// gradient pass over the n elements at dst, then the results and the return.
func crossEntropyFinish(s *isa, dst, n GPVirtual, total, dtotal VecVirtual, grad func(cv, bv VecVirtual)) {
	t := load(asm.Param("t"))
	et := asm.XMM()
	asm.VMOVSS(Mem{Base: dst, Index: t, Scale: 4}, et)
	sc, c := asm.XMM(), asm.XMM()
	asm.VMOVSS(paramAddr("scale"), sc)
	asm.VDIVSS(total, sc, c)
	cv, bv := s.vec(), s.vec()
	asm.VBROADCASTSS(c, cv)
	asm.VBROADCASTSS(paramAddr("shift"), bv)
	grad(cv, bv)
	for i, v := range []VecVirtual{total, dtotal, et} {
		b, err := asm.ReturnIndex(i).Resolve()
		if err != nil {
			panic(err)
		}
		asm.VMOVSS(v.AsX(), b.Addr)
	}
	asm.VZEROUPPER()
	asm.RET()
}
