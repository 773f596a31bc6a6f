package main

import (
	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func init() { register("topk", genTopKFamily) }

func genTopKFamily() {
	for _, s := range isas {
		genFirstAbove(s)
		genSpanMax(s)
		genAboveAll(s)
	}
}

// topKSpan is kernels.topKSpan, the length of the spans whose maxima bound
// TopK's search (kernels' TestSpanMax checks that the two agree).
const topKSpan = 512

// genSpanMax emits spanMax<ISA>(dst, x []float32) bool: dst[j] = the largest
// of x[j·topKSpan : (j+1)·topKSpan] for j < len(dst), which needs len(x) ≥
// topKSpan·len(dst), and reports whether any of those elements is NaN (the
// maxima are then meaningless). TopK's first pass in one call: four
// accumulators per span, NaNs found by compares of pairs of loaded vectors
// gathered into one flag for the whole call, the span reduced to a scalar.
func genSpanMax(s *isa) {
	name := s.name("spanMax")
	TEXT(name, NOSPLIT, "func(dst, x []float32) bool")
	asm.Doc(name + " sets dst[j] = max x[j·512 : (j+1)·512] for j < len(dst) (len(x) ≥ 512·len(dst)) and reports whether any of those x is NaN.")
	dst := load(asm.Param("dst").Base())
	nb := load(asm.Param("dst").Len())
	x := load(asm.Param("x").Base())
	lbl := func(l string) string { return "spanMax" + l }
	const unroll = 4
	if topKSpan%(unroll*s.lanes) != 0 {
		panic("spanMax: span not a multiple of the unrolled block")
	}
	// AVX-512: two opmask chains, each lane staying set while the pairs
	// compared into it are ordered (ORD_Q under its own mask), one
	// instruction per pair of vectors; AVX2: unordered compares ORed into a
	// vector.
	var kok [2]OpmaskVirtual
	var vnan VecVirtual
	if s.evex {
		for c := range kok {
			kok[c] = asm.K()
			asm.KXNORW(kok[c], kok[c], kok[c])
		}
	} else {
		vnan = s.vec()
		s.zero(vnan)
	}
	pair := 0
	unord := func(a, b VecVirtual) {
		if s.evex {
			k := kok[pair%2]
			pair++
			asm.VCMPPS(U8(7), b, a, k, k) // ORD_Q
			return
		}
		c := s.vec()
		asm.VCMPPS(U8(3), b, a, c) // UNORD_Q
		asm.VORPS(c, vnan, vnan)
	}
	j := asm.GP64()
	asm.XORQ(j, j)
	asm.Label(lbl("span"))
	asm.CMPQ(j, nb)
	asm.JAE(LabelRef(lbl("done")))
	accs := make([]VecVirtual, unroll)
	for u := range accs {
		accs[u] = s.vec()
		asm.VMOVUPS(Mem{Base: x, Disp: u * s.bytes()}, accs[u])
	}
	unord(accs[0], accs[1])
	unord(accs[2], accs[3])
	cnt := asm.GP64()
	asm.MOVQ(U32(topKSpan/(unroll*s.lanes)-1), cnt)
	asm.ADDQ(U32(unroll*s.bytes()), x)
	asm.Label(lbl("block"))
	vs := make([]VecVirtual, unroll)
	for u := range vs {
		vs[u] = s.vec()
		asm.VMOVUPS(Mem{Base: x, Disp: u * s.bytes()}, vs[u])
		asm.VMAXPS(vs[u], accs[u], accs[u])
	}
	unord(vs[0], vs[1])
	unord(vs[2], vs[3])
	asm.ADDQ(U32(unroll*s.bytes()), x)
	asm.DECQ(cnt)
	asm.JNZ(LabelRef(lbl("block")))
	asm.VMAXPS(accs[1], accs[0], accs[0])
	asm.VMAXPS(accs[3], accs[2], accs[2])
	asm.VMAXPS(accs[2], accs[0], accs[0])
	m := s.fold(accs[0], func(src, acc VecVirtual) { asm.VMAXPS(src, acc, acc) })
	asm.VMOVSS(m, Mem{Base: dst, Index: j, Scale: 4})
	asm.INCQ(j)
	asm.JMP(LabelRef(lbl("span")))
	asm.Label(lbl("done"))
	r := asm.GP8()
	if s.evex {
		ok := asm.GP32()
		asm.KANDW(kok[1], kok[0], kok[0])
		asm.KMOVW(kok[0], ok)
		asm.CMPL(ok, U32(0xffff))
	} else {
		mask := asm.GP32()
		asm.VMOVMSKPS(vnan, mask)
		asm.TESTL(mask, mask)
	}
	asm.SETNE(r)
	asm.Store(r, asm.ReturnIndex(0))
	asm.VZEROUPPER()
	asm.RET()
}

// cmpNLEUQ is the VCMPPS predicate "not ≤", true on NaN.
const cmpNLEUQ = 0x16

// genFirstAbove emits firstAbove<ISA>(x []float32, t float32) int, the
// smallest i with !(x[i] ≤ t) (x[i] > t or NaN), or len(x): TopK's scan for
// its next candidate. Four vectors an iteration are compared with t and their
// masks ORed into one test; a hit is located vector by vector (TZCNT of the
// mask). Then single vectors, then the tail (AVX-512: an opmask compare of a
// masked load; AVX2: one element at a time).
func genFirstAbove(s *isa) {
	name := s.name("firstAbove")
	TEXT(name, NOSPLIT, "func(x []float32, t float32) int")
	asm.Doc(name + " returns the smallest i with !(x[i] ≤ t), or len(x).")
	x := load(asm.Param("x").Base())
	n := load(asm.Param("x").Len())
	tv := s.broadcast("t")
	lbl := func(l string) string { return "firstAbove" + l }
	i, lim := asm.GP64(), asm.GP64()
	asm.XORQ(i, i)
	cmpVec := func(disp int) (VecVirtual, OpmaskVirtual) {
		v := s.vec()
		asm.VMOVUPS(Mem{Base: x, Index: i, Scale: 4, Disp: disp}, v)
		if s.evex {
			k := asm.K()
			asm.VCMPPS(U8(cmpNLEUQ), tv, v, k)
			return nil, k
		}
		asm.VCMPPS(U8(cmpNLEUQ), tv, v, v)
		return v, nil
	}
	found := func(v VecVirtual, k OpmaskVirtual, disp int, tag string) {
		b := asm.GP32()
		if s.evex {
			asm.KMOVW(k, b)
		} else {
			asm.VMOVMSKPS(v, b)
		}
		asm.TESTL(b, b)
		skip := lbl("miss") + tag
		asm.JZ(LabelRef(skip))
		asm.TZCNTL(b, b)
		r := asm.GP64()
		asm.MOVL(b, r.As32())
		if disp != 0 {
			asm.ADDQ(U32(disp/4), r)
		}
		asm.ADDQ(i, r)
		asm.Store(r, asm.ReturnIndex(0))
		asm.VZEROUPPER()
		asm.RET()
		asm.Label(skip)
	}
	const unroll = 4
	asm.MOVQ(n, lim)
	asm.ANDQ(I32(-unroll*s.lanes), lim)
	asm.Label(lbl("block"))
	asm.CMPQ(i, lim)
	asm.JAE(LabelRef(lbl("single")))
	vs := make([]VecVirtual, unroll)
	ks := make([]OpmaskVirtual, unroll)
	for j := range vs {
		vs[j], ks[j] = cmpVec(j * s.bytes())
	}
	any := asm.GP32()
	if s.evex {
		ka, kb := asm.K(), asm.K()
		asm.KORW(ks[1], ks[0], ka)
		asm.KORW(ks[3], ks[2], kb)
		asm.KORTESTW(kb, ka)
		asm.JNZ(LabelRef(lbl("locate")))
	} else {
		a, b := s.vec(), s.vec()
		asm.VORPS(vs[1], vs[0], a)
		asm.VORPS(vs[3], vs[2], b)
		asm.VORPS(b, a, a)
		asm.VMOVMSKPS(a, any)
		asm.TESTL(any, any)
		asm.JNZ(LabelRef(lbl("locate")))
	}
	asm.ADDQ(U32(unroll*s.lanes), i)
	asm.JMP(LabelRef(lbl("block")))
	asm.Label(lbl("locate"))
	for j := range vs {
		found(vs[j], ks[j], j*s.bytes(), itoaGen(j))
	}
	scanRest(s, lbl, x, n, i, lim, tv, cmpVec, found, "none")
	if !s.evex {
		asm.Label(lbl("scalarLoop"))
		asm.CMPQ(i, n)
		asm.JAE(LabelRef(lbl("none")))
		w := asm.XMM()
		asm.VMOVSS(Mem{Base: x, Index: i, Scale: 4}, w)
		asm.VUCOMISS(tv.AsX(), w)
		asm.JA(LabelRef(lbl("scalarHit")))
		asm.JP(LabelRef(lbl("scalarHit")))
		asm.INCQ(i)
		asm.JMP(LabelRef(lbl("scalarLoop")))
		asm.Label(lbl("scalarHit"))
		asm.Store(i, asm.ReturnIndex(0))
		asm.VZEROUPPER()
		asm.RET()
	}
	asm.Label(lbl("none"))
	asm.Store(n, asm.ReturnIndex(0))
	asm.VZEROUPPER()
	asm.RET()
}

func itoaGen(v int) string {
	if v < 10 {
		return string(rune('0' + v))
	}
	return itoaGen(v/10) + string(rune('0'+v%10))
}

// genAboveAll emits aboveAll<ISA>(dst []int32, x []float32, t float32) int:
// the indices i with !(x[i] ≤ t) (x[i] > t or NaN), in increasing order, into
// dst, returning how many, or −1 as soon as there are more than len(dst)
// (dst then holds the first len(dst)). TopK's search of a span in one call:
// four vectors an iteration compared with t and their masks ORed into one
// test, as firstAbove; a vector with hits gives them up one bit at a time
// (TZCNT, BLSR). Then single vectors, then the tail (AVX-512: an opmask
// compare of a masked load; AVX2: one element at a time).
func genAboveAll(s *isa) {
	name := s.name("aboveAll")
	TEXT(name, NOSPLIT, "func(dst []int32, x []float32, t float32) int")
	asm.Doc(name + " stores the indices i with !(x[i] ≤ t) into dst in order and returns how many, or −1 if more than len(dst).")
	dst := load(asm.Param("dst").Base())
	capa := load(asm.Param("dst").Len())
	x := load(asm.Param("x").Base())
	n := load(asm.Param("x").Len())
	tv := s.broadcast("t")
	lbl := func(l string) string { return "aboveAll" + l }
	i, lim, cnt := asm.GP64(), asm.GP64(), asm.GP64()
	asm.XORQ(i, i)
	asm.XORQ(cnt, cnt)
	cmpVec := func(disp int) (VecVirtual, OpmaskVirtual) {
		v := s.vec()
		asm.VMOVUPS(Mem{Base: x, Index: i, Scale: 4, Disp: disp}, v)
		if s.evex {
			k := asm.K()
			asm.VCMPPS(U8(cmpNLEUQ), tv, v, k)
			return nil, k
		}
		asm.VCMPPS(U8(cmpNLEUQ), tv, v, v)
		return v, nil
	}
	// emit stores the index of every set bit of the mask of v (or k), the
	// vector at element i + off.
	emit := func(v VecVirtual, k OpmaskVirtual, off int, tag string) {
		b := asm.GP32()
		if s.evex {
			asm.KMOVW(k, b)
		} else {
			asm.VMOVMSKPS(v, b)
		}
		loop, next := lbl("bits")+tag, lbl("bitsDone")+tag
		asm.Label(loop)
		asm.TESTL(b, b)
		asm.JZ(LabelRef(next))
		asm.CMPQ(cnt, capa)
		asm.JAE(LabelRef(lbl("full")))
		r := asm.GP32()
		asm.TZCNTL(b, r)
		asm.BLSRL(b, b)
		asm.ADDL(i.As32(), r)
		if off != 0 {
			asm.ADDL(U32(off), r)
		}
		asm.MOVL(r, Mem{Base: dst, Index: cnt, Scale: 4})
		asm.INCQ(cnt)
		asm.JMP(LabelRef(loop))
		asm.Label(next)
	}
	const unroll = 4
	asm.MOVQ(n, lim)
	asm.ANDQ(I32(-unroll*s.lanes), lim)
	asm.Label(lbl("block"))
	asm.CMPQ(i, lim)
	asm.JAE(LabelRef(lbl("single")))
	vs := make([]VecVirtual, unroll)
	ks := make([]OpmaskVirtual, unroll)
	for j := range vs {
		vs[j], ks[j] = cmpVec(j * s.bytes())
	}
	if s.evex {
		ka, kb := asm.K(), asm.K()
		asm.KORW(ks[1], ks[0], ka)
		asm.KORW(ks[3], ks[2], kb)
		asm.KORTESTW(kb, ka)
		asm.JZ(LabelRef(lbl("blockNext")))
	} else {
		a, b := s.vec(), s.vec()
		any := asm.GP32()
		asm.VORPS(vs[1], vs[0], a)
		asm.VORPS(vs[3], vs[2], b)
		asm.VORPS(b, a, a)
		asm.VMOVMSKPS(a, any)
		asm.TESTL(any, any)
		asm.JZ(LabelRef(lbl("blockNext")))
	}
	for j := range vs {
		emit(vs[j], ks[j], j*s.lanes, itoaGen(j))
	}
	asm.Label(lbl("blockNext"))
	asm.ADDQ(U32(unroll*s.lanes), i)
	asm.JMP(LabelRef(lbl("block")))
	scanRest(s, lbl, x, n, i, lim, tv, cmpVec, emit, "done")
	if !s.evex {
		asm.Label(lbl("scalarLoop"))
		asm.CMPQ(i, n)
		asm.JAE(LabelRef(lbl("done")))
		w := asm.XMM()
		asm.VMOVSS(Mem{Base: x, Index: i, Scale: 4}, w)
		asm.VUCOMISS(tv.AsX(), w)
		asm.JA(LabelRef(lbl("scalarHit")))
		asm.JP(LabelRef(lbl("scalarHit")))
		asm.Label(lbl("scalarNext"))
		asm.INCQ(i)
		asm.JMP(LabelRef(lbl("scalarLoop")))
		asm.Label(lbl("scalarHit"))
		asm.CMPQ(cnt, capa)
		asm.JAE(LabelRef(lbl("full")))
		asm.MOVL(i.As32(), Mem{Base: dst, Index: cnt, Scale: 4})
		asm.INCQ(cnt)
		asm.JMP(LabelRef(lbl("scalarNext")))
	}
	asm.Label(lbl("done"))
	asm.Store(cnt, asm.ReturnIndex(0))
	asm.VZEROUPPER()
	asm.RET()
	asm.Label(lbl("full"))
	asm.MOVQ(I32(-1), cnt)
	asm.Store(cnt, asm.ReturnIndex(0))
	asm.VZEROUPPER()
	asm.RET()
}

// scanRest emits the scans' common end: the single vectors left after the
// unrolled blocks, each compare handed to visit, then on AVX-512 the masked
// last partial vector (to lbl(end) when nothing is left). The AVX2 tail, one
// element at a time, is the caller's.
func scanRest(s *isa, lbl func(string) string, x, n, i, lim GPVirtual, tv VecVirtual,
	cmpVec func(disp int) (VecVirtual, OpmaskVirtual), visit func(VecVirtual, OpmaskVirtual, int, string), end string) {
	asm.Label(lbl("single"))
	asm.MOVQ(n, lim)
	asm.ANDQ(I32(-s.lanes), lim)
	asm.Label(lbl("singleLoop"))
	asm.CMPQ(i, lim)
	asm.JAE(LabelRef(lbl("tail")))
	v, k := cmpVec(0)
	visit(v, k, 0, "Single")
	asm.ADDQ(U32(s.lanes), i)
	asm.JMP(LabelRef(lbl("singleLoop")))
	asm.Label(lbl("tail"))
	if !s.evex {
		return
	}
	rem := asm.GP64()
	asm.MOVQ(n, rem)
	asm.SUBQ(i, rem)
	asm.JZ(LabelRef(lbl(end)))
	t := s.tailMask(rem)
	w, kc := s.vec(), asm.K()
	asm.VMOVUPS_Z(Mem{Base: x, Index: i, Scale: 4}, t.k, w)
	asm.VCMPPS(U8(cmpNLEUQ), tv, w, t.k, kc)
	visit(nil, kc, 0, "Tail")
}
