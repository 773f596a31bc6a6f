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
		genSpanMax(s, false)
		genSpanMax(s, true)
		genAboveAll(s)
		genKthLargest(s)
		genAboveSpans(s)
	}
}

// topKSpan is kernels.topKSpan, the length of the spans whose maxima bound
// TopK's search (kernels' TestSpanMax checks that the two agree).
const topKSpan = 512

// spanMaxHeader declares spanMax (or spanMaxKth when kth) for s, its doc
// ending in kthDoc (spanMaxKth) or nanDoc (spanMax), loads dst's base and
// length and x's base, and returns them with the kernel's label maker.
func spanMaxHeader(s *isa, kth bool, kthDoc, nanDoc string) (dst, nb, x GPVirtual, lbl func(string) string) {
	name, prefix := s.name("spanMax"), "spanMax"
	if kth {
		name, prefix = s.name("spanMaxKth"), "spanMaxKth"
		TEXT(name, NOSPLIT, "func(dst, x []float32, k int) (kth float32, nan bool)")
		asm.Doc(name + " is spanMax that also returns the k-th largest of the maxima (−Inf if len(dst) < k), 1 ≤ k ≤ " + itoaGen(s.lanes) + kthDoc)
	} else {
		TEXT(name, NOSPLIT, "func(dst, x []float32) bool")
		asm.Doc(name + " sets dst[j] = max x[j·512 : (j+1)·512] for j < len(dst) (len(x) ≥ 512·len(dst))" + nanDoc)
	}
	dst = load(asm.Param("dst").Base())
	nb = load(asm.Param("dst").Len())
	x = load(asm.Param("x").Base())
	return dst, nb, x, func(l string) string { return prefix + l }
}

// genSpanMax emits spanMax<ISA>(dst, x []float32) bool: dst[j] = the largest
// of x[j·topKSpan : (j+1)·topKSpan] for j < len(dst), which needs len(x) ≥
// topKSpan·len(dst), and reports whether any of those elements is NaN (the
// maxima are then meaningless). TopK's first pass in one call: four
// accumulators per span, NaNs found by compares of pairs of loaded vectors
// gathered into one flag for the whole call, the span reduced to a scalar.
// AVX2 has its own (genSpanMaxAVX2).
//
// With kth, spanMaxKth<ISA>(dst, x []float32, k int) (kth float32, nan bool)
// also returns the k-th largest of the maxima (counting equal values; −Inf
// if len(dst) < k), for 1 ≤ k ≤ lanes: it keeps the largest maxima so far
// sorted in one vector, inserting each span's maximum without a branch (a
// compare with the vector, the vector shifted up one lane, the minimum of
// the two lanes' candidates where the maximum belongs above).
func genSpanMax(s *isa, kth bool) {
	if !s.evex {
		genSpanMaxAVX2(s, kth)
		return
	}
	dst, nb, x, lbl := spanMaxHeader(s, kth, ".", " and reports whether any of those x is NaN.")
	var top, infv VecVirtual
	if kth {
		top, infv = spanMaxKthInit(s)
	}
	const accN = 4
	if topKSpan%(accN*s.lanes) != 0 {
		panic("spanMax: span not a multiple of the unrolled block")
	}
	// Two opmask chains, each lane staying set while the pairs compared into
	// it are ordered (ORD_Q under its own mask), one instruction per pair of
	// vectors.
	var kok [2]OpmaskVirtual
	for c := range kok {
		kok[c] = asm.K()
		asm.KXNORW(kok[c], kok[c], kok[c])
	}
	pair := 0
	loadBlock := func(step int) []VecVirtual {
		vs := make([]VecVirtual, accN)
		for u := range vs {
			vs[u] = s.vec()
			asm.VMOVUPS(Mem{Base: x, Disp: (step*accN + u) * s.bytes()}, vs[u])
		}
		for u := 0; u < accN; u += 2 {
			k := kok[pair%2]
			pair++
			asm.VCMPPS(U8(7), vs[u+1], vs[u], k, k) // ORD_Q
		}
		return vs
	}
	j := asm.GP64()
	asm.XORQ(j, j)
	asm.Label(lbl("span"))
	asm.CMPQ(j, nb)
	asm.JAE(LabelRef(lbl("done")))
	accs := loadBlock(0)
	// The rest of the span unrolled: no loop counter or pointer update
	// between the steps.
	for step := 1; step < topKSpan/(accN*s.lanes); step++ {
		vs := loadBlock(step)
		for u := range vs {
			asm.VMAXPS(vs[u], accs[u], accs[u])
		}
	}
	asm.ADDQ(U32(topKSpan*4), x)
	asm.VMAXPS(accs[1], accs[0], accs[0])
	asm.VMAXPS(accs[3], accs[2], accs[2])
	asm.VMAXPS(accs[2], accs[0], accs[0])
	m := s.fold(accs[0], func(src, acc VecVirtual) { asm.VMAXPS(src, acc, acc) })
	asm.VMOVSS(m, Mem{Base: dst, Index: j, Scale: 4})
	if kth {
		// Insert m into top, sorted descending: lanes where m is larger
		// take min(m, the lane above) (+Inf above lane 0).
		mb, sh := s.vec(), s.vec()
		asm.VBROADCASTSS(m, mb)
		k := asm.K()
		asm.VCMPPS(U8(1), mb, top, k) // LT_OS: top < m
		asm.VALIGND(U8(15), infv, top, sh)
		asm.VMINPS(mb, sh, k, top)
	}
	asm.INCQ(j)
	asm.JMP(LabelRef(lbl("span")))
	asm.Label(lbl("done"))
	if kth {
		spanMaxKthResult(s, top)
	}
	r := asm.GP8()
	ok := asm.GP32()
	asm.KANDW(kok[1], kok[0], kok[0])
	asm.KMOVW(kok[0], ok)
	asm.CMPL(ok, U32(0xffff))
	asm.SETNE(r)
	spanMaxReturn(r, kth)
}

// spanMaxKthInit returns spanMaxKth's sorted vector, all −Inf, and a vector
// of +Inf.
func spanMaxKthInit(s *isa) (top, infv VecVirtual) {
	inf := asm.GP32()
	asm.MOVL(U32(0x7f800000), inf)
	infv = s.broadcastGP(inf)
	top = s.vec()
	asm.VXORPS(top, top, top)
	asm.VSUBPS(infv, top, top) // −Inf
	return top, infv
}

// spanMaxKthResult stores lane k−1 of top as spanMaxKth's kth.
func spanMaxKthResult(s *isa, top VecVirtual) {
	kr := load(asm.Param("k"))
	asm.DECQ(kr)
	xi, kv := asm.XMM(), s.vec()
	asm.VMOVD(kr.As32(), xi)
	if s.evex {
		asm.VMOVAPS(xi, kv.AsX()) // index k−1 in lane 0
	} else {
		// A whole-register write: AVX2 has no register to spare for one
		// that a partial write would keep live.
		asm.VPBROADCASTD(xi, kv)
	}
	asm.VPERMPS(top, kv, kv)
	asm.Store(kv.AsX(), asm.ReturnIndex(0))
}

// spanMaxReturn stores the NaN flag r as spanMax's or spanMaxKth's result and
// returns.
func spanMaxReturn(r GPVirtual, kth bool) {
	if kth {
		asm.Store(r, asm.ReturnIndex(1))
	} else {
		asm.Store(r, asm.ReturnIndex(0))
	}
	asm.VZEROUPPER()
	asm.RET()
}

// genSpanMaxAVX2 is genSpanMax on AVX2, where the vector ports that take
// VMAXPS and VCMPPS bound the pass, not the reads: eight accumulators per
// span, each taking one vector a step as a memory operand of VMAXPS (which
// returns that operand when either is NaN, so after each step an
// accumulator is NaN exactly when the vector it just took is), and the NaN
// flag the sum of all accumulators after every step, added in a tree into
// one vector, which the adders take beside the maxima (compares would
// compete with them). The sum can also become NaN without a NaN element
// (+Inf and −Inf maxima, or sums overflowing to both), so the flag is a
// superset: kernels' spanMaxima and spanMaxKth confirm a reported NaN.
// For spanMaxKth each span's maximum m is reduced in every lane and
// inserted into the sorted vector top as new[i] = max(top[i], min(m,
// top[i−1])) (top[−1] = +Inf): a shift (VPERMPS), a blend of +Inf into lane
// 0, a minimum and a maximum, off the loads' path.
func genSpanMaxAVX2(s *isa, kth bool) {
	dst, nb, x, lbl := spanMaxHeader(s, kth, "; its nan is spanMax's.",
		" and reports true if any of those x is NaN, and perhaps if they hold opposite infinities or finite values whose sums overflow to both (spanMaxima checks).")
	var top, infv, shIdx VecVirtual
	if kth {
		top, infv = spanMaxKthInit(s)
		// VPERMPS indices 0 0 1 2 3 4 5 6: the vector one lane up.
		b, xi := asm.GP64(), asm.XMM()
		asm.MOVQ(U64(0x0605040302010000), b)
		asm.VMOVQ(b, xi)
		shIdx = s.vec()
		asm.VPMOVZXBD(xi, shIdx)
	}
	const accN = 8
	if topKSpan%(accN*s.lanes) != 0 {
		panic("spanMax: span not a multiple of the unrolled block")
	}
	// vnan: the sum of every accumulator after every step, NaN in a lane
	// when one of them was (or when sums of opposite infinities met).
	vnan := s.vec()
	s.zero(vnan)
	checkNaN := func(accs []VecVirtual) {
		ts := make([]VecVirtual, 0, accN/2)
		for q := 0; q < accN/2; q++ {
			t := s.vec()
			asm.VADDPS(accs[2*q+1], accs[2*q], t)
			ts = append(ts, t)
			if q%2 == 1 { // pairs of sums as they are made: fewer live registers
				asm.VADDPS(ts[len(ts)-1], ts[len(ts)-2], ts[len(ts)-2])
				ts = ts[:len(ts)-1]
			}
		}
		for len(ts) > 1 {
			asm.VADDPS(ts[1], ts[0], ts[0])
			ts = append(ts[:1], ts[2:]...)
		}
		asm.VADDPS(ts[0], vnan, vnan)
	}
	j := asm.GP64()
	asm.XORQ(j, j)
	asm.Label(lbl("span"))
	asm.CMPQ(j, nb)
	asm.JAE(LabelRef(lbl("done")))
	accs := make([]VecVirtual, accN)
	for u := range accs {
		accs[u] = s.vec()
		asm.VMOVUPS(Mem{Base: x, Disp: u * s.bytes()}, accs[u])
	}
	checkNaN(accs)
	// The rest of the span unrolled: no loop counter or pointer update
	// between the steps.
	for step := 1; step < topKSpan/(accN*s.lanes); step++ {
		for u := range accs {
			asm.VMAXPS(Mem{Base: x, Disp: (step*accN + u) * s.bytes()}, accs[u], accs[u]) // the loaded vector if NaN
		}
		checkNaN(accs)
	}
	asm.ADDQ(U32(topKSpan*4), x)
	for w := accN / 2; w >= 1; w /= 2 {
		for u := range w {
			asm.VMAXPS(accs[u+w], accs[u], accs[u])
		}
	}
	a := accs[0]
	if kth {
		// The maximum m in every lane, then into top.
		t := s.vec()
		asm.VPERM2F128(U8(1), a, a, t)
		asm.VMAXPS(t, a, a)
		for _, swap := range []uint8{0x4e, 0xb1} {
			asm.VSHUFPS(U8(swap), a, a, t)
			asm.VMAXPS(t, a, a)
		}
		asm.VMOVSS(a.AsX(), Mem{Base: dst, Index: j, Scale: 4})
		sh := s.vec()
		asm.VPERMPS(top, shIdx, sh)
		asm.VBLENDPS(U8(1), infv, sh, sh)
		asm.VMINPS(a, sh, sh)
		asm.VMAXPS(sh, top, top)
	} else {
		m := s.fold(a, func(src, acc VecVirtual) { asm.VMAXPS(src, acc, acc) })
		asm.VMOVSS(m, Mem{Base: dst, Index: j, Scale: 4})
	}
	asm.INCQ(j)
	asm.JMP(LabelRef(lbl("span")))
	asm.Label(lbl("done"))
	if kth {
		spanMaxKthResult(s, top)
	}
	r := asm.GP8()
	mask := asm.GP32()
	asm.VCMPPS(U8(3), vnan, vnan, vnan) // UNORD_Q
	asm.VMOVMSKPS(vnan, mask)
	asm.TESTL(mask, mask)
	asm.SETNE(r)
	spanMaxReturn(r, kth)
}

// cmpNLEUQ is the VCMPPS predicate "not ≤", true on NaN.
const cmpNLEUQ = 0x16

// orTree ORs the vectors vs in a tree into vs[0] and returns it.
func orTree(vs []VecVirtual) VecVirtual {
	for len(vs) > 1 {
		for q := 0; q < len(vs)/2; q++ {
			asm.VORPS(vs[2*q+1], vs[2*q], vs[2*q])
			vs[q] = vs[2*q]
		}
		vs = vs[:len(vs)/2]
	}
	return vs[0]
}

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
	cmpVec := cmpAbove(s, x, i, tv)
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
	anyHit(s, vs, ks)
	asm.JNZ(LabelRef(lbl("locate")))
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

// cmpAbove returns an emitter of the compare !(x[i+disp/4] ≤ t) of one
// vector: an opmask under EVEX, else a vector of all-ones lanes.
func cmpAbove(s *isa, x, i GPVirtual, tv VecVirtual) func(disp int) (VecVirtual, OpmaskVirtual) {
	return func(disp int) (VecVirtual, OpmaskVirtual) {
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
}

// storeHits returns an emitter that stores into dst[cnt…], in order, the
// index of every lane set in a compare (cmpAbove's) of the vector at element
// i + off, jumping to lbl(full) when cnt reaches capa.
func storeHits(s *isa, lbl func(string) string, dst, capa, cnt, i GPVirtual, full string) func(v VecVirtual, k OpmaskVirtual, off int, tag string) {
	return func(v VecVirtual, k OpmaskVirtual, off int, tag string) {
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
		asm.JAE(LabelRef(lbl(full)))
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
}

// anyHit sets ZF when none of four compares has a lane set: the opmasks ks
// under EVEX, else the all-ones lanes of the vectors vs.
func anyHit(s *isa, vs []VecVirtual, ks []OpmaskVirtual) {
	if s.evex {
		ka, kb := asm.K(), asm.K()
		asm.KORW(ks[1], ks[0], ka)
		asm.KORW(ks[3], ks[2], kb)
		asm.KORTESTW(kb, ka)
		return
	}
	a, b := s.vec(), s.vec()
	any := asm.GP32()
	asm.VORPS(vs[1], vs[0], a)
	asm.VORPS(vs[3], vs[2], b)
	asm.VORPS(b, a, a)
	asm.VMOVMSKPS(a, any)
	asm.TESTL(any, any)
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
	i, cnt := asm.GP64(), asm.GP64()
	asm.XORQ(i, i)
	asm.XORQ(cnt, cnt)
	aboveAllFrom(s, lbl, dst, capa, x, n, i, cnt, tv)
}

// aboveAllFrom emits aboveAll's scan and return from element i of x (n
// elements) on, with cnt indices already in dst (capacity capa).
func aboveAllFrom(s *isa, lbl func(string) string, dst, capa, x, n, i, cnt GPVirtual, tv VecVirtual) {
	lim := asm.GP64()
	cmpVec := cmpAbove(s, x, i, tv)
	emit := storeHits(s, lbl, dst, capa, cnt, i, "full")
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
	anyHit(s, vs, ks)
	asm.JZ(LabelRef(lbl("blockNext")))
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

// topKGroup is the number of span maxima the kernels below take at a time:
// kthLargest's block and aboveSpans' mask word; TopK pads its maxima with
// −Inf to a multiple of it.
const topKGroup = 64

// broadcastGP returns a vector with every int32 lane the low 32 bits of r.
func (s *isa) broadcastGP(r GPVirtual) VecVirtual {
	x, v := asm.XMM(), s.vec()
	asm.VMOVD(r.As32(), x)
	asm.VPBROADCASTD(x, v)
	return v
}

// genKthLargest emits kthLargest<ISA>(m []float32, k int) float32: the k-th
// largest of m (counting equal values), for m free of NaN, len(m) a positive
// multiple of 64 and 1 ≤ k ≤ len(m). TopK's floor without a branch on the
// data: each element's rank (the count of elements strictly greater) is
// accumulated lane-wise, one broadcast element against four vectors of m at
// a time, and the result is the least element whose rank is below k. The
// work grows as len(m)²: TopK calls it with 64 maxima.
func genKthLargest(s *isa) {
	name := s.name("kthLargest")
	TEXT(name, NOSPLIT, "func(m []float32, k int) float32")
	asm.Doc(name + " returns the k-th largest of m (m free of NaN, len(m) a positive multiple of 64, 1 ≤ k ≤ len(m)).")
	m := load(asm.Param("m").Base())
	n := load(asm.Param("m").Len())
	kr := load(asm.Param("k"))
	lbl := func(l string) string { return "kthLargest" + l }
	kv := s.broadcastGP(kr)
	inf := asm.GP32()
	asm.MOVL(U32(0x7f800000), inf)
	best := s.broadcastGP(inf)
	var one VecVirtual
	if s.evex {
		o := asm.GP32()
		asm.MOVL(U32(1), o)
		one = s.broadcastGP(o)
	}
	end := asm.GP64()
	asm.LEAQ(Mem{Base: m, Index: n, Scale: 4}, end)
	p := asm.GP64()
	asm.MOVQ(m, p)
	const unroll = 4
	asm.Label(lbl("block"))
	vs := make([]VecVirtual, unroll)
	cs := make([]VecVirtual, unroll)
	for u := range vs {
		vs[u], cs[u] = s.vec(), s.vec()
		asm.VMOVUPS(Mem{Base: p, Disp: u * s.bytes()}, vs[u])
		s.zero(cs[u])
	}
	q := asm.GP64()
	asm.MOVQ(m, q)
	asm.Label(lbl("rank"))
	for d := 0; d < 2; d++ { // two elements an iteration (len(m) is even)
		b := s.vec()
		asm.VBROADCASTSS(Mem{Base: q, Disp: 4 * d}, b)
		for u := range vs {
			if s.evex {
				k := asm.K()
				asm.VCMPPS(U8(1), b, vs[u], k) // LT_OS: v < b
				asm.VPADDD(one, cs[u], k, cs[u])
			} else {
				c := s.vec()
				asm.VCMPPS(U8(1), b, vs[u], c)
				asm.VPSUBD(c, cs[u], cs[u]) // −1 where v < b
			}
		}
	}
	asm.ADDQ(U32(8), q)
	asm.CMPQ(q, end)
	asm.JB(LabelRef(lbl("rank")))
	for u := range vs {
		if s.evex {
			k := asm.K()
			asm.VPCMPD(U8(1), kv, cs[u], k) // LT: rank < k
			asm.VMINPS(vs[u], best, k, best)
		} else {
			c := s.vec()
			asm.VPCMPGTD(cs[u], kv, c) // k > rank
			asm.VBLENDVPS(c, vs[u], best, c)
			asm.VMINPS(c, best, best)
		}
	}
	asm.ADDQ(U32(unroll*s.bytes()), p)
	asm.CMPQ(p, end)
	asm.JB(LabelRef(lbl("block")))
	r := s.fold(best, func(src, acc VecVirtual) { asm.VMINPS(src, acc, acc) })
	asm.Store(r.AsX(), asm.ReturnIndex(0))
	asm.VZEROUPPER()
	asm.RET()
}

// genAboveSpans emits aboveSpans<ISA>(dst []int32, x []float32, bm
// []float32, t float32) int: aboveAll over every whole span j of x
// (x[j·512 : (j+1)·512], j < len(x)/512) with !(bm[j] ≤ t), in increasing
// order of j, and then over the elements after the last whole span, the
// indices stored relative to x; len(bm) is a multiple of 64 and at least
// len(x)/512. TopK's search in one call: bm is compared with t 64 maxima at a
// time into a bit mask of the spans to scan, which TZCNT and BLSR walk, each
// span is scanned as aboveAll's unrolled blocks, and the rest of x as
// aboveAll.
func genAboveSpans(s *isa) {
	name := s.name("aboveSpans")
	TEXT(name, NOSPLIT, "func(dst []int32, x []float32, bm []float32, t float32) int")
	asm.Doc(name + " stores into dst, in order, the indices i with !(x[i] ≤ t) in every whole span j (x[j·512 : (j+1)·512]) with !(bm[j] ≤ t) and after the last whole span, and returns how many, or −1 if more than len(dst); len(bm) is a multiple of 64, at least len(x)/512.")
	dst := load(asm.Param("dst").Base())
	capa := load(asm.Param("dst").Len())
	x := load(asm.Param("x").Base())
	n := load(asm.Param("x").Len())
	bm := load(asm.Param("bm").Base())
	nbm := load(asm.Param("bm").Len())
	tv := s.broadcast("t")
	lbl := func(l string) string { return "aboveSpans" + l }
	c, cnt, mask, i, end := asm.GP64(), asm.GP64(), asm.GP64(), asm.GP64(), asm.GP64()
	asm.XORQ(c, c)
	asm.XORQ(cnt, cnt)
	asm.Label(lbl("group"))
	asm.CMPQ(c, nbm)
	asm.JAE(LabelRef(lbl("spansDone")))
	// mask: bit j set when !(bm[c+j] ≤ t).
	asm.XORQ(mask, mask)
	for u := 0; u < topKGroup/s.lanes; u++ {
		v, w := s.vec(), asm.GP64()
		asm.VMOVUPS(Mem{Base: bm, Index: c, Scale: 4, Disp: u * s.bytes()}, v)
		if s.evex {
			k := asm.K()
			asm.VCMPPS(U8(cmpNLEUQ), tv, v, k)
			asm.KMOVW(k, w.As32())
		} else {
			asm.VCMPPS(U8(cmpNLEUQ), tv, v, v)
			asm.VMOVMSKPS(v, w.As32())
		}
		if u > 0 {
			asm.SHLQ(U8(u*s.lanes), w)
		}
		asm.ORQ(w, mask)
	}
	asm.Label(lbl("span"))
	asm.TESTQ(mask, mask)
	asm.JZ(LabelRef(lbl("groupNext")))
	asm.TZCNTQ(mask, i)
	asm.BLSRQ(mask, mask)
	asm.ADDQ(c, i)
	asm.SHLQ(U8(9), i) // × topKSpan
	asm.LEAQ(Mem{Base: i, Disp: topKSpan}, end)
	asm.CMPQ(end, n) // a span past x's end (bm not ≤ t there) is skipped
	asm.JA(LabelRef(lbl("span")))
	emit := storeHits(s, lbl, dst, capa, cnt, i, "Restfull") // aboveAllFrom's exit
	aboveSpansScan(s, lbl, x, i, end, tv, emit, lbl("span"))
	asm.Label(lbl("groupNext"))
	asm.ADDQ(U32(topKGroup), c)
	asm.JMP(LabelRef(lbl("group")))
	// The elements after the last whole span: their whole blocks as the
	// spans', then the rest as aboveAll.
	asm.Label(lbl("spansDone"))
	asm.MOVQ(n, i)
	asm.ANDQ(I32(-topKSpan), i)
	asm.MOVQ(n, end)
	asm.ANDQ(I32(-aboveSpansBlock*s.lanes), end)
	asm.CMPQ(i, end)
	asm.JAE(LabelRef(lbl("rest")))
	tailLbl := func(l string) string { return lbl("Tail" + l) }
	full := func(l string) string { // the hits' labels, and aboveAllFrom's exit when dst is full
		if l == "Restfull" {
			return lbl(l)
		}
		return tailLbl(l)
	}
	aboveSpansScan(s, tailLbl, x, i, end, tv, storeHits(s, full, dst, capa, cnt, i, "Restfull"), lbl("restFrom"))
	asm.Label(lbl("restFrom"))
	asm.MOVQ(end, i)
	asm.Label(lbl("rest"))
	aboveAllFrom(s, func(l string) string { return lbl("Rest" + l) }, dst, capa, x, n, i, cnt, tv)
}

// aboveSpansBlock is the number of vectors aboveSpansScan tests together.
const aboveSpansBlock = 8

// aboveSpansScan emits aboveSpans' scan of [i, end) (whole blocks), jumping
// to next at its end: eight vectors a block, addressed from a pointer (so
// that the loads fuse into the compares), their compares ORed and tested
// together; a block with a hit is compared again vector by vector for emit.
func aboveSpansScan(s *isa, lbl func(string) string, x, i, end GPVirtual, tv VecVirtual, emit func(VecVirtual, OpmaskVirtual, int, string), next string) {
	const unroll = aboveSpansBlock
	if topKSpan%(unroll*s.lanes) != 0 {
		panic("aboveSpans: span not a multiple of the unrolled block")
	}
	p, pend := asm.GP64(), asm.GP64()
	asm.LEAQ(Mem{Base: x, Index: i, Scale: 4}, p)
	asm.LEAQ(Mem{Base: x, Index: end, Scale: 4}, pend)
	asm.Label(lbl("block"))
	if s.evex {
		// Each compare ORed into the tree as soon as its pair is made: the
		// opmask registers are few.
		var ks []OpmaskVirtual
		for u := range unroll {
			k := asm.K()
			asm.VCMPPS(U8(cmpNGEUQ), Mem{Base: p, Disp: u * s.bytes()}, tv, k) // !(t ≥ x)
			ks = append(ks, k)
			for w := u + 1; w%2 == 0 && len(ks) > 2; w /= 2 {
				asm.KORW(ks[len(ks)-1], ks[len(ks)-2], ks[len(ks)-2])
				ks = ks[:len(ks)-1]
			}
		}
		asm.KORTESTW(ks[1], ks[0])
	} else {
		cs := make([]VecVirtual, unroll)
		for u := range cs {
			cs[u] = s.vec()
			asm.VCMPPS(U8(cmpNGEUQ), Mem{Base: p, Disp: u * s.bytes()}, tv, cs[u]) // !(t ≥ x)
		}
		b := asm.GP32()
		asm.VMOVMSKPS(orTree(cs), b)
		asm.TESTL(b, b)
	}
	asm.JNZ(LabelRef(lbl("hit")))
	asm.Label(lbl("blockNext"))
	asm.ADDQ(U32(unroll*s.bytes()), p)
	asm.CMPQ(p, pend)
	asm.JB(LabelRef(lbl("block")))
	asm.JMP(LabelRef(next))
	asm.Label(lbl("hit"))
	// i = the block's first element, for emit.
	asm.MOVQ(p, i)
	asm.SUBQ(x, i)
	asm.SHRQ(U8(2), i)
	cmpVec := cmpAbove(s, x, i, tv)
	for u := 0; u < unroll; u++ {
		v, k := cmpVec(u * s.bytes())
		emit(v, k, u*s.lanes, itoaGen(u))
	}
	asm.JMP(LabelRef(lbl("blockNext")))
}
