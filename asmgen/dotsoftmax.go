package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func init() { register("dotsoftmax", genDotSoftmaxFamily) }

func genDotSoftmaxFamily() {
	for _, s := range isas {
		genDotSoftmaxMatTVec(s, false)
		genDotSoftmaxMatTVec(s, true)
	}
}

// genDotSoftmaxMatTVec emits dotSoftmaxMatTVec<ISA>(ctx, scores, a []float32,
// lda int, h []float32, m, l float32) (float32, float32, int): one streaming pass of a dot-product
// attention step over the len(scores)×len(ctx) matrix A, whose rows are both
// the keys and the values. len(scores) is a multiple of 8, len(ctx) a multiple
// of 8 and ≥ 8, and (m, l) is the running max and sum, returned updated.
//
// Each block of eight rows: the eight scores s = A·h (one accumulator per row,
// one load of h for eight FMAs), stored to scores; if their max mb exceeds m,
// ctx and l are scaled by e^(m−mb) and m = mb; then e = exp(s − m) is added to
// l and the eight rows, now in L1, are added to ctx with weights e, while the
// next block's rows are prefetched: the core computes on one block while the
// next streams in from L2 or L3, and A is read once. It returns 0, or 1 as
// soon as a block holds a score that is not finite (ctx partly updated). Both
// ISAs compute in YMM vectors.
//
// far emits dotSoftmaxMatTVecFar<ISA>, the same pass for an A that streams
// from memory, or whose rows are a multiple of 4 KiB apart (they share L1
// sets, and the next block's prefetched lines would evict the current one's):
// each block's scores are taken row after row (four accumulators, h reloaded
// from L1), so that A is read in address order, and nothing is prefetched by
// software, so that the hardware prefetcher keeps the lines in flight.
// Measured on Zen 4, six matrices in turn (from memory): 8192×512 728 µs
// against 1248 µs for the interleaved rows with PREFETCHT0, 32768×128 585
// against 1756 µs; one matrix of 8 MiB in L3: 154 against 133 µs. Two rows
// read side by side (1.5 loads per FMA instead of 2) were as slow from memory
// as the near kernel (32768×128: 1582 against 608 µs) and no faster in L2 or
// L3: only one stream in address order keeps the prefetcher ahead.
func genDotSoftmaxMatTVec(s *isa, far bool) {
	y := ymmWide(s)
	name := s.name("dotSoftmaxMatTVec")
	if far {
		name = s.name("dotSoftmaxMatTVecFar")
	}
	TEXT(name, NOSPLIT, "func(ctx, scores, a []float32, lda int, h []float32, m, l float32) (float32, float32, int)")
	Doc(name+" adds one streaming-softmax pass of a dot-product attention step over",
		"the rows of A (keys and values) to ctx and the running max m and sum l, and returns them",
		"with 0, or 1 on a score that is not finite.")
	sc := load(Param("scores").Base())
	n := load(Param("scores").Len())
	a := load(Param("a").Base())
	lda := load(Param("lda"))
	SHLQ(U8(2), lda)
	lda3 := GP64()
	LEAQ(Mem{Base: lda, Index: lda, Scale: 2}, lda3)
	rowsAt := func(p, q GPVirtual, disp int) []Mem {
		return []Mem{
			{Base: p, Disp: disp}, {Base: p, Index: lda, Scale: 1, Disp: disp},
			{Base: p, Index: lda, Scale: 2, Disp: disp}, {Base: p, Index: lda3, Scale: 1, Disp: disp},
			{Base: q, Disp: disp}, {Base: q, Index: lda, Scale: 1, Disp: disp},
			{Base: q, Index: lda, Scale: 2, Disp: disp}, {Base: q, Index: lda3, Scale: 1, Disp: disp},
		}
	}
	e := newExpGen(y)

	// m in a local, l in lane 0 of the running sum, −m broadcast.
	mloc := AllocLocal(8)
	{
		t := XMM()
		Load(Param("m"), t)
		VMOVSS(t, mloc)
	}
	lsum := y.vec()
	Load(Param("l"), lsum.AsX()) // MOVSS from memory: the other lanes 0
	negM := y.vec()
	negate(mloc, negM)

	Label("block")
	CMPQ(n, U32(8))
	JB(LabelRef("end"))

	// s = the eight rows' dot products with h.
	p, q, hp, cnt := GP64(), GP64(), GP64(), GP64()
	MOVQ(a, p)
	LEAQ(Mem{Base: a, Index: lda, Scale: 4}, q)
	Load(Param("h").Base(), hp)
	Load(Param("ctx").Len(), cnt)
	SHRQ(U8(3), cnt)
	acc := make([]VecVirtual, 8)
	for i := range acc {
		acc[i] = y.vec()
		y.zero(acc[i])
	}
	if far {
		for i, m := range rowsAt(p, q, 0) {
			rowDot(y, acc[i], m, hp, cnt, i)
		}
	} else {
		Label("dot")
		xv := y.vec()
		VMOVUPS(Mem{Base: hp}, xv)
		for i, m := range rowsAt(p, q, 0) {
			VFMADD231PS(m, xv, acc[i])
		}
		ADDQ(U32(32), p)
		ADDQ(U32(32), q)
		ADDQ(U32(32), hp)
		DECQ(cnt)
		JNZ(LabelRef("dot"))
	}
	sv := y.vec()
	joinHalves(y, y.hsum4(acc[0], acc[1], acc[2], acc[3]), y.hsum4(acc[4], acc[5], acc[6], acc[7]), sv)
	VMOVUPS(sv, Mem{Base: sc})
	jumpIfNotFinite(y, sv, "special")

	// A larger max rescales what came before.
	mb := y.vec()
	VMOVAPS(sv, mb)
	mbx := y.fold(mb, func(src, acc VecVirtual) { VMAXPS(src, acc, acc) })
	VUCOMISS(mloc, mbx)
	JBE(LabelRef("weights"))
	{
		d := XMM()
		VMOVSS(mloc, d)
		VSUBSS(mbx, d, d) // m − mb < 0, −Inf for the first block
		VMOVSS(mbx, mloc)
		dv := y.vec()
		VBROADCASTSS(d, dv)
		f := e.applyNonPositive(dv)
		VMULPS(f, lsum, lsum)
		cp := GP64()
		Load(Param("ctx").Base(), cp)
		Load(Param("ctx").Len(), cnt)
		SHRQ(U8(3), cnt)
		Label("rescale")
		v := y.vec()
		VMULPS(Mem{Base: cp}, f, v)
		VMOVUPS(v, Mem{Base: cp})
		ADDQ(U32(32), cp)
		DECQ(cnt)
		JNZ(LabelRef("rescale"))
		negate(mloc, negM)
	}

	// e = exp(s − m), summed, and ctx += Σᵢ eᵢ·rowᵢ.
	Label("weights")
	VADDPS(negM, sv, sv)
	ev := e.applyNonPositive(sv)
	VADDPS(ev, lsum, lsum)
	lane, b := laneBroadcaster(y, ev), make([]VecVirtual, 8)
	for i := range b {
		b[i] = lane(i)
	}
	// pf is the next block (this one for the last block: no access past A).
	pf, pq := GP64(), GP64()
	if !far {
		LEAQ(Mem{Base: a, Index: lda, Scale: 8}, pf)
		CMPQ(n, U32(16))
		CMOVQCS(a, pf)
		LEAQ(Mem{Base: pf, Index: lda, Scale: 4}, pq)
	}
	cp := GP64()
	MOVQ(a, p)
	LEAQ(Mem{Base: a, Index: lda, Scale: 4}, q)
	Load(Param("ctx").Base(), cp)
	Load(Param("ctx").Len(), cnt)
	SHRQ(U8(4), cnt) // pairs of vectors: one cache line of each row
	JZ(LabelRef("ctxOne"))
	Label("ctxPair")
	for j := 0; j < 2; j++ {
		v := y.vec()
		VMOVUPS(Mem{Base: cp, Disp: 32 * j}, v)
		for i, m := range rowsAt(p, q, 32*j) {
			VFMADD231PS(m, b[i], v)
		}
		VMOVUPS(v, Mem{Base: cp, Disp: 32 * j})
	}
	ptrs := []GPVirtual{p, q, cp}
	if !far {
		for _, m := range rowsAt(pf, pq, 0) {
			PREFETCHT0(m)
		}
		ptrs = append(ptrs, pf, pq)
	}
	for _, r := range ptrs {
		ADDQ(U32(64), r)
	}
	DECQ(cnt)
	JNZ(LabelRef("ctxPair"))

	Label("ctxOne")
	Load(Param("ctx").Len(), cnt)
	TESTQ(U32(8), cnt)
	JZ(LabelRef("next"))
	{
		v := y.vec()
		VMOVUPS(Mem{Base: cp}, v)
		for i, m := range rowsAt(p, q, 0) {
			VFMADD231PS(m, b[i], v)
		}
		VMOVUPS(v, Mem{Base: cp})
	}
	Label("next")
	LEAQ(Mem{Base: a, Index: lda, Scale: 8}, a)
	ADDQ(U32(32), sc)
	SUBQ(U32(8), n)
	JMP(LabelRef("block"))

	Label("end")
	{
		t := XMM()
		VMOVSS(mloc, t)
		Store(t, ReturnIndex(0))
	}
	Store(y.hsum(lsum), ReturnIndex(1))
	ret := GP64()
	XORQ(ret, ret)
	Store(ret, ReturnIndex(2))
	VZEROUPPER()
	RET()

	Label("special")
	MOVQ(U32(1), ret)
	Store(ret, ReturnIndex(2))
	VZEROUPPER()
	RET()
}

// joinHalves sets the YMM dst to the XMMs lo and hi side by side.
func joinHalves(s *isa, lo, hi, dst VecVirtual) {
	if s.wide {
		VINSERTF32X4(U8(1), hi, lo.AsY(), dst)
		return
	}
	VINSERTF128(U8(1), hi, lo.AsY(), dst)
}

// jumpIfNotFinite jumps to label if a lane of the YMM v is ±Inf or NaN
// (v − v is NaN there, 0 elsewhere).
func jumpIfNotFinite(s *isa, v VecVirtual, label string) {
	t := s.vec()
	VSUBPS(v, v, t)
	if s.wide {
		k := K()
		VCMPPS(U8(cmpUnord), t, t, k)
		KORTESTB(k, k)
	} else {
		VCMPPS(U8(cmpUnord), t, t, t)
		r := GP32()
		VMOVMSKPS(t, r)
		TESTL(r, r)
	}
	JNZ(LabelRef(label))
}

// rowDot adds to acc the dot product of the row at m with the vector at h, in
// lanes (summed later): len(ctx)/8 vectors, four accumulators while four
// remain, then one at a time. i tells the labels of row i apart.
func rowDot(y *isa, acc VecVirtual, m Mem, h, cnt GPVirtual, i int) {
	rp, hp := GP64(), GP64()
	LEAQ(m, rp)
	MOVQ(h, hp)
	t := []VecVirtual{acc, y.vec(), y.vec(), y.vec()}
	for _, v := range t[1:] {
		y.zero(v)
	}
	four, one, done := fmt.Sprintf("row%dFour", i), fmt.Sprintf("row%dOne", i), fmt.Sprintf("row%dDone", i)
	Load(Param("ctx").Len(), cnt)
	SHRQ(U8(5), cnt)
	JZ(LabelRef(one + "s"))
	Label(four)
	for j, v := range t {
		xv := y.vec()
		VMOVUPS(Mem{Base: hp, Disp: 32 * j}, xv)
		VFMADD231PS(Mem{Base: rp, Disp: 32 * j}, xv, v)
	}
	ADDQ(U32(128), rp)
	ADDQ(U32(128), hp)
	DECQ(cnt)
	JNZ(LabelRef(four))
	Label(one + "s")
	Load(Param("ctx").Len(), cnt)
	SHRQ(U8(3), cnt)
	ANDQ(U32(3), cnt)
	JZ(LabelRef(done))
	Label(one)
	xv := y.vec()
	VMOVUPS(Mem{Base: hp}, xv)
	VFMADD231PS(Mem{Base: rp}, xv, acc)
	ADDQ(U32(32), rp)
	ADDQ(U32(32), hp)
	DECQ(cnt)
	JNZ(LabelRef(one))
	Label(done)
	VADDPS(t[1], t[0], t[0])
	VADDPS(t[3], t[2], t[2])
	VADDPS(t[2], t[0], t[0])
}
