package main

import (
	"fmt"
	"math/bits"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func init() {
	register("dotsoftmax", genDotSoftmaxFamily)
	registerTrial("dotsoftmax", genDotSoftmaxTrials)
}

// genDotSoftmaxFamily emits the kernels the route table can choose
// (kernels/dispatch_amd64.go): per ISA the near kernel and the far kernel
// without and with a prefetch one block ahead, and on AVX-512 the far kernel
// that reads the rows as four streams (dotSoftmaxMatTVecFarSplit4PF1<ISA>),
// the prefetching ones in both prefetch levels (…L2<ISA> into L2).
func genDotSoftmaxFamily() {
	for _, s := range dualISAs {
		genDotSoftmaxMatTVec(s, false, 0, orderBlocks, splitShape{})
		genDotSoftmaxMatTVec(s, true, 0, orderBlocks, splitShape{})
		for _, l := range prefetchLevels {
			genDotSoftmaxMatTVec(s, true, 1, orderBlocks, splitShape{hint: l.suffix()})
			if s.evex {
				genDotSoftmaxMatTVec(s, true, 1, orderSplit, splitShape{4, 1, l.suffix()})
			}
		}
	}
}

// genDotSoftmaxTrials emits the far variants no CPU class takes, to compare
// with the default ones: prefetch two and four blocks ahead, the order that
// scores the next block before this block's context, and the other split
// shapes (dotSoftmaxTrialSplits).
func genDotSoftmaxTrials() {
	for _, s := range dualISAs {
		for _, d := range []int{2, 4} {
			genDotSoftmaxMatTVec(s, true, d, orderBlocks, splitShape{})
		}
		if s.evex {
			genDotSoftmaxMatTVec(s, true, 1, orderAhead, splitShape{})
			for _, v := range dotSoftmaxTrialSplits {
				genDotSoftmaxMatTVec(s, true, v.pfBlocks, orderSplit, v)
			}
		}
	}
}

// dotSoftmaxTrialSplits are the trial split far variants (AVX-512 only),
// named dotSoftmaxMatTVecFarSplit[PF<pfBlocks>]<ISA> for two parts and
// dotSoftmaxMatTVecFarSplit<parts>PF<pfBlocks>[<hint>]<ISA> for more.
var dotSoftmaxTrialSplits = []splitShape{
	{2, 0, ""}, {2, 1, ""}, {4, 2, ""}, {6, 1, ""}, {8, 1, ""}, {8, 1, "T2"},
}

// splitShape is a split far variant: the rows in parts read as that many
// streams, each line also prefetched pfBlocks blocks ahead in its part (none
// for 0) with PREFETCHT0, PREFETCHT1 for hint "L2" or PREFETCHT2 for "T2".
// The far kernel of orderBlocks takes only its hint.
type splitShape struct {
	parts, pfBlocks int
	hint            string
}

// The orders in which genDotSoftmaxMatTVec's kernels take the blocks.
const (
	orderBlocks = iota // each block's scores, weights and context in turn
	orderAhead         // the next block's scores before this block's context
	orderSplit         // parts of the rows as streams: a block of each scored together
)

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
// soon as a block holds a score that is not finite (ctx partly updated). The
// scores of a block are one YMM; the rows and ctx are YMM vectors but for
// avx512z, whose ZMM loops end with a masked half vector when len(ctx) is an
// odd multiple of 8.
//
// far emits dotSoftmaxMatTVecFar<ISA>, the same pass for an A that streams
// from memory, or whose rows are a multiple of 4 KiB apart (they share L1
// sets, and the next block's prefetched lines would evict the current one's):
// each block's scores are taken row after row (four accumulators, h reloaded
// from L1), so that A is read in address order, and nothing is prefetched by
// software, so that the hardware prefetcher keeps the lines in flight
// (kernels/DESIGN.md explains this layout).
//
// With pfBlocks > 0, far emits dotSoftmaxMatTVecFarPF<pfBlocks><ISA>, which
// also prefetches (PREFETCHT0; PREFETCHT1 for …PF<pfBlocks>L2<ISA>, sp.hint
// "L2"), for every line of a row it reads, the line at
// the same place pfBlocks blocks ahead, unless fewer than pfBlocks follow: it keeps
// more lines in flight than the hardware prefetcher alone on cores whose
// prefetcher falls behind a single stream (kernels/DESIGN.md).
//
// order orderAhead emits dotSoftmaxMatTVecFarAheadPF<pfBlocks><ISA>, which
// scores the next block before it adds this block's context. orderSplit
// emits dotSoftmaxMatTVecFarSplit[PF<pfBlocks>]<ISA> for sp.parts = 2 and
// dotSoftmaxMatTVecFarSplit<parts>PF<pfBlocks>[<hint>]<ISA> for more
// (AVX-512 only, len(scores) a multiple of 8·parts): A read as parts streams
// (splitBlocks), for cores whose bandwidth from memory grows with the number
// of streams (kernels/DESIGN.md). sp is the zero splitShape for the other
// orders.
func genDotSoftmaxMatTVec(s *isa, far bool, pfBlocks int, order int, sp splitShape) {
	ahead, split := order == orderAhead, order == orderSplit
	y := ymmOf(s)   // the eight scores of a block
	w := evexYMM(s) // the rows and ctx
	wide := w.lanes == 16
	// ctxLoop sets cnt to the number of whole vectors of w in ctx.
	ctxVectors := func(cnt GPVirtual) {
		asm.Load(asm.Param("ctx").Len(), cnt)
		asm.SHRQ(U8(bits.TrailingZeros(uint(w.lanes))), cnt)
	}
	// ctxHalf jumps to skip unless ctx ends with a half vector (wide only).
	ctxHalf := func(cnt GPVirtual, skip string) {
		asm.Load(asm.Param("ctx").Len(), cnt)
		asm.TESTQ(U32(8), cnt)
		asm.JZ(LabelRef(skip))
	}
	name := s.name("dotSoftmaxMatTVec")
	switch {
	case split && sp.parts > 2:
		name = s.name(fmt.Sprintf("dotSoftmaxMatTVecFarSplit%dPF%d%s", sp.parts, pfBlocks, sp.hint))
	case split && pfBlocks > 0:
		name = s.name(fmt.Sprintf("dotSoftmaxMatTVecFarSplitPF%d", pfBlocks))
	case split:
		name = s.name("dotSoftmaxMatTVecFarSplit")
	case far && ahead:
		name = s.name(fmt.Sprintf("dotSoftmaxMatTVecFarAheadPF%d", pfBlocks))
	case far && pfBlocks > 0:
		name = s.name(fmt.Sprintf("dotSoftmaxMatTVecFarPF%d%s", pfBlocks, sp.hint))
	case far:
		name = s.name("dotSoftmaxMatTVecFar")
	}
	TEXT(name, NOSPLIT, "func(ctx, scores, a []float32, lda int, h []float32, m, l float32) (float32, float32, int)")
	asm.Doc(name+" adds one streaming-softmax pass of a dot-product attention step over",
		"the rows of A (keys and values) to ctx and the running max m and sum l, and returns them",
		"with 0, or 1 on a score that is not finite.")
	var k8 OpmaskVirtual // wide: the lanes of a half vector
	if wide {
		k8 = halfMask()
	}
	sc := load(asm.Param("scores").Base())
	n := load(asm.Param("scores").Len())
	a := load(asm.Param("a").Base())
	lda := load(asm.Param("lda"))
	asm.SHLQ(U8(2), lda)
	lda3 := asm.GP64()
	asm.LEAQ(Mem{Base: lda, Index: lda, Scale: 2}, lda3)
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
	mloc := asm.AllocLocal(8)
	{
		t := asm.XMM()
		asm.Load(asm.Param("m"), t)
		asm.VMOVSS(t, mloc)
	}
	lsum := y.vec()
	asm.Load(asm.Param("l"), lsum.AsX()) // MOVSS from memory: the other lanes 0
	negM := y.vec()
	negate(mloc, negM)

	var p, q, hp, cnt GPVirtual
	var sv VecVirtual
	var b []VecVirtual
	// scores emits sv = the scores of the block at a, stored to sc.
	scores := func() {
		// s = the eight rows' dot products with h.
		p, q, hp, cnt = asm.GP64(), asm.GP64(), asm.GP64(), asm.GP64()
		asm.MOVQ(a, p)
		asm.LEAQ(Mem{Base: a, Index: lda, Scale: 4}, q)
		asm.Load(asm.Param("h").Base(), hp)
		ctxVectors(cnt)
		acc := make([]VecVirtual, 8)
		for i := range acc {
			acc[i] = w.vec()
			w.zero(acc[i])
		}
		if far {
			var pfOff GPVirtual // the byte distance to prefetch at, 0 near the end of A
			if pfBlocks > 0 {
				pfOff = asm.GP64()
				none := asm.GP64()
				asm.XORQ(none, none)
				asm.MOVQ(lda, pfOff)
				asm.SHLQ(U8(3+bits.TrailingZeros(uint(pfBlocks))), pfOff) // 8·pfBlocks rows
				asm.CMPQ(n, U32(8*(pfBlocks+1)))
				asm.CMOVQCS(none, pfOff)
			}
			for i, m := range rowsAt(p, q, 0) {
				rowDot(w, acc[i], m, hp, cnt, i, k8, pfOff, sp.hint)
			}
		} else {
			if wide {
				asm.TESTQ(cnt, cnt)
				asm.JZ(LabelRef("dotHalf"))
			}
			asm.Label("dot")
			xv := w.vec()
			asm.VMOVUPS(Mem{Base: hp}, xv)
			for i, m := range rowsAt(p, q, 0) {
				asm.VFMADD231PS(m, xv, acc[i])
			}
			for _, r := range []GPVirtual{p, q, hp} {
				asm.ADDQ(U32(w.bytes()), r)
			}
			asm.DECQ(cnt)
			asm.JNZ(LabelRef("dot"))
			if wide {
				asm.Label("dotHalf")
				ctxHalf(cnt, "dotDone")
				xv := w.vec()
				asm.VMOVUPS_Z(Mem{Base: hp}, k8, xv)
				for i, m := range rowsAt(p, q, 0) {
					asm.VFMADD231PS(m, xv, k8, acc[i])
				}
				asm.Label("dotDone")
			}
		}
		sv = y.vec()
		joinHalves(y, y.hsum4(acc[0], acc[1], acc[2], acc[3]), y.hsum4(acc[4], acc[5], acc[6], acc[7]), sv)
		asm.VMOVUPS(sv, Mem{Base: sc})
		jumpIfNotFinite(y, sv, "special")
	}

	// weights emits the block's weights b (broadcast, one per row) from sv,
	// rescaling ctx and l first if the block raises the max.
	weights := func() {
		// A larger max rescales what came before.
		mb := y.vec()
		asm.VMOVAPS(sv, mb)
		mbx := y.fold(mb, func(src, acc VecVirtual) { asm.VMAXPS(src, acc, acc) })
		asm.VUCOMISS(mloc, mbx)
		asm.JBE(LabelRef("weights"))
		{
			d := asm.XMM()
			asm.VMOVSS(mloc, d)
			asm.VSUBSS(mbx, d, d) // m − mb < 0, −Inf for the first block
			asm.VMOVSS(mbx, mloc)
			dv := y.vec()
			asm.VBROADCASTSS(d, dv)
			f := e.applyNonPositive(dv)
			asm.VMULPS(f, lsum, lsum)
			if wide {
				fz := w.vec()
				asm.VBROADCASTSS(f.AsX(), fz)
				f = fz
			}
			cp := asm.GP64()
			asm.Load(asm.Param("ctx").Base(), cp)
			ctxVectors(cnt)
			if wide {
				asm.JZ(LabelRef("rescaleHalf"))
			}
			asm.Label("rescale")
			v := w.vec()
			asm.VMULPS(Mem{Base: cp}, f, v)
			asm.VMOVUPS(v, Mem{Base: cp})
			asm.ADDQ(U32(w.bytes()), cp)
			asm.DECQ(cnt)
			asm.JNZ(LabelRef("rescale"))
			if wide {
				asm.Label("rescaleHalf")
				ctxHalf(cnt, "rescaleDone")
				v := w.vec()
				asm.VMOVUPS_Z(Mem{Base: cp}, k8, v)
				asm.VMULPS(f, v, v)
				asm.VMOVUPS(v, k8, Mem{Base: cp})
				asm.Label("rescaleDone")
			}
			negate(mloc, negM)
		}

		// e = exp(s − m), summed, and ctx += Σᵢ eᵢ·rowᵢ.
		asm.Label("weights")
		asm.VADDPS(negM, sv, sv)
		ev := e.applyNonPositive(sv)
		asm.VADDPS(ev, lsum, lsum)
		lane := laneBroadcaster(w, ev)
		if b != nil { // allocated before the context that uses them was emitted
			for i := range b {
				asm.VMOVAPS(lane(i), b[i])
			}
			return
		}
		b = make([]VecVirtual, 8)
		for i := range b {
			b[i] = lane(i)
		}
	}

	// context emits ctx += Σᵢ bᵢ·rowᵢ for the block at base.
	context := func(base GPVirtual) {
		// pf is the next block (this one for the last block: no access past A).
		pf, pq := asm.GP64(), asm.GP64()
		if !far {
			asm.LEAQ(Mem{Base: a, Index: lda, Scale: 8}, pf)
			asm.CMPQ(n, U32(16))
			asm.CMOVQCS(a, pf)
			asm.LEAQ(Mem{Base: pf, Index: lda, Scale: 4}, pq)
		}
		cp := asm.GP64()
		asm.MOVQ(base, p)
		asm.LEAQ(Mem{Base: base, Index: lda, Scale: 4}, q)
		asm.Load(asm.Param("ctx").Base(), cp)
		asm.Load(asm.Param("ctx").Len(), cnt)
		asm.SHRQ(U8(4), cnt) // pairs of vectors: one cache line of each row
		asm.JZ(LabelRef("ctxOne"))
		asm.Label("ctxPair")
		for j := 0; j < 64/w.bytes(); j++ {
			v := w.vec()
			d := w.bytes() * j
			asm.VMOVUPS(Mem{Base: cp, Disp: d}, v)
			for i, m := range rowsAt(p, q, d) {
				asm.VFMADD231PS(m, b[i], v)
			}
			asm.VMOVUPS(v, Mem{Base: cp, Disp: d})
		}
		ptrs := []GPVirtual{p, q, cp}
		if !far {
			for _, m := range rowsAt(pf, pq, 0) {
				asm.PREFETCHT0(m)
			}
			ptrs = append(ptrs, pf, pq)
		}
		for _, r := range ptrs {
			asm.ADDQ(U32(64), r)
		}
		asm.DECQ(cnt)
		asm.JNZ(LabelRef("ctxPair"))

		asm.Label("ctxOne")
		asm.Load(asm.Param("ctx").Len(), cnt)
		asm.TESTQ(U32(8), cnt)
		asm.JZ(LabelRef("next"))
		if wide {
			v := w.vec()
			asm.VMOVUPS_Z(Mem{Base: cp}, k8, v)
			for i, m := range rowsAt(p, q, 0) {
				asm.VFMADD231PS(m, b[i], k8, v)
			}
			asm.VMOVUPS(v, k8, Mem{Base: cp})
		} else {
			v := y.vec()
			asm.VMOVUPS(Mem{Base: cp}, v)
			for i, m := range rowsAt(p, q, 0) {
				asm.VFMADD231PS(m, b[i], v)
			}
			asm.VMOVUPS(v, Mem{Base: cp})
		}
		asm.Label("next")
	}

	if split {
		splitBlocks(y, w, a, lda, lda3, sc, n, sp, k8, &p, &q, &cnt, &sv, weights, context)
	} else if !ahead {
		asm.Label("block")
		asm.CMPQ(n, U32(8))
		asm.JB(LabelRef("end"))
		scores()
		weights()
		context(a)
		asm.LEAQ(Mem{Base: a, Index: lda, Scale: 8}, a)
		asm.ADDQ(U32(32), sc)
		asm.SUBQ(U32(8), n)
		asm.JMP(LabelRef("block"))
	} else {
		// Each pass scores the block at a, then adds the context of the
		// block before it (pending, at ac), whose rows are in L1 while the
		// new block's loads are in flight, then computes the new block's
		// weights.
		pending, ac := asm.GP64(), asm.GP64()
		asm.XORQ(pending, pending)
		b = make([]VecVirtual, 8)
		for i := range b {
			b[i] = w.vec()
		}
		asm.Label("block")
		asm.CMPQ(n, U32(8))
		asm.JB(LabelRef("noScores"))
		scores()
		asm.Label("noScores")
		asm.TESTQ(pending, pending)
		asm.JZ(LabelRef("noContext"))
		context(ac)
		asm.Label("noContext")
		asm.CMPQ(n, U32(8))
		asm.JB(LabelRef("end"))
		weights()
		asm.MOVQ(a, ac)
		asm.MOVQ(U32(1), pending)
		asm.LEAQ(Mem{Base: a, Index: lda, Scale: 8}, a)
		asm.ADDQ(U32(32), sc)
		asm.SUBQ(U32(8), n)
		asm.JMP(LabelRef("block"))
	}

	stepReturn(y, mloc, lsum)
}

// joinHalves sets the YMM dst to the XMMs lo and hi side by side.
func joinHalves(s *isa, lo, hi, dst VecVirtual) {
	if s.evex {
		asm.VINSERTF32X4(U8(1), hi, lo.AsY(), dst)
		return
	}
	asm.VINSERTF128(U8(1), hi, lo.AsY(), dst)
}

// jumpIfNotFinite jumps to label if a lane of the YMM v is ±Inf or NaN
// (v − v is NaN there, 0 elsewhere).
func jumpIfNotFinite(s *isa, v VecVirtual, label string) {
	t := s.vec()
	asm.VSUBPS(v, v, t)
	if s.evex {
		k := asm.K()
		asm.VCMPPS(U8(cmpUnord), t, t, k)
		asm.KORTESTB(k, k)
	} else {
		asm.VCMPPS(U8(cmpUnord), t, t, t)
		r := asm.GP32()
		asm.VMOVMSKPS(t, r)
		asm.TESTL(r, r)
	}
	asm.JNZ(LabelRef(label))
}

// rowDot adds to acc the dot product of the row at m with the vector at h, in
// lanes (summed later): len(ctx)/lanes vectors of y, four accumulators while
// four remain, then one at a time, then for a 16-lane y the last half vector
// under the opmask k8. i tells the labels of row i apart. If pfOff is not
// nil, every line read is also prefetched pfOff bytes ahead (prefetchOf
// hint).
func rowDot(y *isa, acc VecVirtual, m Mem, h, cnt GPVirtual, i int, k8 OpmaskVirtual, pfOff GPVirtual, hint string) {
	prefetch := prefetchOf(hint)
	rp, hp := asm.GP64(), asm.GP64()
	asm.LEAQ(m, rp)
	asm.MOVQ(h, hp)
	t := []VecVirtual{acc, y.vec(), y.vec(), y.vec()}
	for _, v := range t[1:] {
		y.zero(v)
	}
	four, one, done := fmt.Sprintf("row%dFour", i), fmt.Sprintf("row%dOne", i), fmt.Sprintf("row%dDone", i)
	shift := uint8(bits.TrailingZeros(uint(y.lanes)))
	asm.Load(asm.Param("ctx").Len(), cnt)
	asm.SHRQ(U8(shift+2), cnt)
	asm.JZ(LabelRef(one + "s"))
	asm.Label(four)
	for j, v := range t {
		xv := y.vec()
		asm.VMOVUPS(Mem{Base: hp, Disp: y.bytes() * j}, xv)
		asm.VFMADD231PS(Mem{Base: rp, Disp: y.bytes() * j}, xv, v)
	}
	if pfOff != nil {
		for d := 0; d < 4*y.bytes(); d += 64 {
			prefetch(Mem{Base: rp, Index: pfOff, Scale: 1, Disp: d})
		}
	}
	asm.ADDQ(U32(4*y.bytes()), rp)
	asm.ADDQ(U32(4*y.bytes()), hp)
	asm.DECQ(cnt)
	asm.JNZ(LabelRef(four))
	asm.Label(one + "s")
	asm.Load(asm.Param("ctx").Len(), cnt)
	asm.SHRQ(U8(shift), cnt)
	asm.ANDQ(U32(3), cnt)
	asm.JZ(LabelRef(done))
	asm.Label(one)
	xv := y.vec()
	asm.VMOVUPS(Mem{Base: hp}, xv)
	asm.VFMADD231PS(Mem{Base: rp}, xv, acc)
	if pfOff != nil {
		prefetch(Mem{Base: rp, Index: pfOff, Scale: 1})
	}
	asm.ADDQ(U32(y.bytes()), rp)
	asm.ADDQ(U32(y.bytes()), hp)
	asm.DECQ(cnt)
	asm.JNZ(LabelRef(one))
	asm.Label(done)
	if y.lanes == 16 {
		half := fmt.Sprintf("row%dHalf", i)
		asm.Load(asm.Param("ctx").Len(), cnt)
		asm.TESTQ(U32(8), cnt)
		asm.JZ(LabelRef(half))
		xv := y.vec()
		asm.VMOVUPS_Z(Mem{Base: hp}, k8, xv)
		asm.VFMADD231PS(Mem{Base: rp}, xv, k8, acc)
		asm.Label(half)
	}
	asm.VADDPS(t[1], t[0], t[0])
	asm.VADDPS(t[3], t[2], t[2])
	asm.VADDPS(t[2], t[0], t[0])
}

// stepReturn emits the two exits of a streaming-softmax kernel: at "end" it
// returns the running max (kept at mloc), the sum of lsum's lanes and 0; at
// "special" (a score that is not finite) it returns 1.
func stepReturn(y *isa, mloc Mem, lsum VecVirtual) {
	asm.Label("end")
	{
		t := asm.XMM()
		asm.VMOVSS(mloc, t)
		asm.Store(t, asm.ReturnIndex(0))
	}
	asm.Store(y.hsum(lsum), asm.ReturnIndex(1))
	ret := asm.GP64()
	asm.XORQ(ret, ret)
	asm.Store(ret, asm.ReturnIndex(2))
	asm.VZEROUPPER()
	asm.RET()

	asm.Label("special")
	asm.MOVQ(U32(1), ret)
	asm.Store(ret, asm.ReturnIndex(2))
	asm.VZEROUPPER()
	asm.RET()
}

// splitBlocks emits the loop of the k-stream far kernel (orderSplit, k =
// parts) over n rows at a, n a multiple of 8·k: the rows are k parts of n/k
// rows, and each pass scores block j of every part (rowDotParts: a row of each
// part at a time, one load of h for them all, at most four parts at once, so
// that six or eight parts are scored four, then the rest), so that A is read
// as k streams, each in address order, in distant places; then it adds the
// weights and context of the parts' blocks in turn to the one running state
// (the order in which blocks are added does not change the pass's result
// beyond rounding). With pfBlocks > 0 every line read is also prefetched
// pfBlocks blocks further on in its part, while more than pfBlocks passes
// remain. It sets p, q and cnt for context and sv for weights, and ends with
// a jump to "end".
func splitBlocks(y, w *isa, a, lda, lda3, sc, n GPVirtual, sp splitShape, k8 OpmaskVirtual,
	p, q, cnt *GPVirtual, sv *VecVirtual, weights func(), context func(GPVirtual)) {
	parts, pfBlocks := sp.parts, sp.pfBlocks
	*p, *q, *cnt = asm.GP64(), asm.GP64(), asm.GP64()
	// nd = n/(8·parts) passes; off = (n/parts)·lda bytes between the parts'
	// rows; scOff = (n/parts)·4 bytes between their scores.
	nd, off := asm.GP64(), asm.GP64()
	scOff := asm.AllocLocal(8)
	if parts&(parts-1) == 0 {
		asm.MOVQ(n, nd)
		asm.SHRQ(U8(3+bits.TrailingZeros(uint(parts))), nd)
	} else {
		// n/(8·parts) in float64: exact, as the quotient is an integer
		// and n < 2⁵³.
		t, d, c := asm.XMM(), asm.XMM(), asm.GP64()
		asm.VCVTSI2SDQ(n, t, t)
		asm.MOVQ(U32(8*parts), c)
		asm.VCVTSI2SDQ(c, d, d)
		asm.VDIVSD(d, t, t)
		asm.VCVTTSD2SIQ(t, nd)
	}
	{
		t := asm.GP64()
		asm.MOVQ(nd, t)
		asm.SHLQ(U8(5), t)
		asm.MOVQ(t, scOff)
	}
	asm.MOVQ(nd, off)
	asm.SHLQ(U8(3), off)
	asm.IMULQ(lda, off)
	var pfA GPVirtual
	if pfBlocks > 0 {
		pfA = asm.GP64()
	}
	cur, scp, pass := asm.GP64(), asm.GP64(), asm.GP64()

	asm.Label("split")
	asm.TESTQ(nd, nd)
	asm.JZ(LabelRef("end"))
	if pfBlocks > 0 {
		none := asm.GP64()
		asm.XORQ(none, none)
		asm.MOVQ(lda, pfA)
		asm.SHLQ(U8(3+bits.TrailingZeros(uint(pfBlocks))), pfA) // 8·pfBlocks rows
		asm.CMPQ(nd, U32(pfBlocks+1))
		asm.CMOVQCS(none, pfA)
	}
	// The scores of each part, stored to sc + s·scOff.
	asm.MOVQ(sc, scp)
	rp := asm.GP64()
	for s0 := 0; s0 < parts; s0 += 4 {
		c := min(parts-s0, 4) // parts scored at once
		nacc := 1             // accumulators per part and row
		if c <= 2 {
			nacc = 2
		}
		half := make([][2]VecVirtual, c) // each part's first and last four scores
		for g := 0; g < 2; g++ {
			acc := make([][4]VecVirtual, c)
			for r := 0; r < 4; r++ {
				i := 4*g + r
				row := make([]VecVirtual, c)
				for s := range row {
					row[s] = w.vec()
					acc[s][r] = row[s]
				}
				splitRowAddr(rp, a, lda, lda3, i)
				if s0 > 0 {
					asm.LEAQ(Mem{Base: rp, Index: off, Scale: uint8(s0)}, rp)
				}
				rowDotParts(w, row, nacc, rp, off, *cnt, 8*s0+i, k8, pfA, sp.hint)
			}
			for s := range half {
				half[s][g] = y.hsum4(acc[s][0], acc[s][1], acc[s][2], acc[s][3])
			}
		}
		for s := range half {
			v := y.vec()
			joinHalves(y, half[s][0], half[s][1], v)
			asm.VMOVUPS(v, Mem{Base: scp})
			asm.ADDQ(scOff, scp)
		}
	}
	// The parts' blocks in turn: their scores reloaded, the weights and the
	// context.
	*sv = y.vec()
	asm.MOVQ(a, cur)
	asm.MOVQ(sc, scp)
	asm.MOVQ(U32(parts), pass)
	asm.Label("splitPass")
	asm.VMOVUPS(Mem{Base: scp}, *sv)
	jumpIfNotFinite(y, *sv, "special")
	weights()
	context(cur)
	asm.ADDQ(off, cur)
	asm.ADDQ(scOff, scp)
	asm.DECQ(pass)
	asm.JNZ(LabelRef("splitPass"))
	asm.LEAQ(Mem{Base: a, Index: lda, Scale: 8}, a)
	asm.ADDQ(U32(32), sc)
	asm.DECQ(nd)
	asm.JMP(LabelRef("split"))
}

// prefetchOf returns the prefetch of a splitShape's hint: PREFETCHT0 for
// none, PREFETCHT1 for "L2", PREFETCHT2 for "T2".
func prefetchOf(hint string) func(Mem) {
	switch hint {
	case "L2":
		return pfL2.prefetch
	case "T2":
		return func(m Mem) { asm.PREFETCHT2(m) }
	}
	return pfL1.prefetch
}

// splitRowAddr sets rp to the address of row i (0 ≤ i < 8) of the block at a.
func splitRowAddr(rp, a, lda, lda3 GPVirtual, i int) {
	switch i {
	case 0:
		asm.MOVQ(a, rp)
	case 1:
		asm.LEAQ(Mem{Base: a, Index: lda, Scale: 1}, rp)
	case 2:
		asm.LEAQ(Mem{Base: a, Index: lda, Scale: 2}, rp)
	case 3:
		asm.LEAQ(Mem{Base: a, Index: lda3, Scale: 1}, rp)
	case 4:
		asm.LEAQ(Mem{Base: a, Index: lda, Scale: 4}, rp)
	case 5:
		asm.LEAQ(Mem{Base: a, Index: lda, Scale: 4}, rp)
		asm.ADDQ(lda, rp)
	case 6:
		asm.LEAQ(Mem{Base: a, Index: lda, Scale: 2}, rp)
		asm.LEAQ(Mem{Base: rp, Index: lda, Scale: 4}, rp)
	case 7:
		asm.LEAQ(Mem{Base: a, Index: lda3, Scale: 1}, rp)
		asm.LEAQ(Mem{Base: rp, Index: lda, Scale: 4}, rp)
	}
}

// rowDotParts sets acc[s] to the lane-wise partial dot products of h with
// the row at rp + s·off, for up to four parts s: two vectors of each at a
// time, one load of h for them all, then one, then for a 16-lane y the last
// half vector under the opmask k8. With nacc = 2 each part sums the two
// vectors of a pair in two accumulators, added at the end. It advances rp.
// If pfA is not nil, every line read is also prefetched pfA bytes further on
// in its part (prefetchOf hint). i tells the labels of row i apart.
func rowDotParts(y *isa, acc []VecVirtual, nacc int, rp, off, cnt GPVirtual, i int, k8 OpmaskVirtual, pfA GPVirtual, hint string) {
	prefetch := prefetchOf(hint)
	hp := load(asm.Param("h").Base())
	t := make([][]VecVirtual, len(acc)) // t[s][j]: part s's accumulator j
	for s := range t {
		t[s] = []VecVirtual{acc[s]}
		for len(t[s]) < nacc {
			t[s] = append(t[s], y.vec())
		}
		for _, v := range t[s] {
			y.zero(v)
		}
	}
	var off3 GPVirtual
	if len(acc) > 3 {
		off3 = asm.GP64()
		asm.LEAQ(Mem{Base: off, Index: off, Scale: 2}, off3)
	}
	var pp GPVirtual
	if pfA != nil {
		pp = asm.GP64()
		asm.LEAQ(Mem{Base: rp, Index: pfA, Scale: 1}, pp)
	}
	at := func(base GPVirtual, s, d int) Mem {
		switch s {
		case 1:
			return Mem{Base: base, Index: off, Scale: 1, Disp: d}
		case 2:
			return Mem{Base: base, Index: off, Scale: 2, Disp: d}
		case 3:
			return Mem{Base: base, Index: off3, Scale: 1, Disp: d}
		}
		return Mem{Base: base, Disp: d}
	}
	two, one, half, done := fmt.Sprintf("split%dTwo", i), fmt.Sprintf("split%dOne", i), fmt.Sprintf("split%dHalf", i), fmt.Sprintf("split%dDone", i)
	shift := uint8(bits.TrailingZeros(uint(y.lanes)))
	asm.Load(asm.Param("ctx").Len(), cnt)
	asm.SHRQ(U8(shift+1), cnt)
	asm.JZ(LabelRef(one))
	asm.Label(two)
	for j := 0; j < 2; j++ {
		xv := y.vec()
		d := y.bytes() * j
		asm.VMOVUPS(Mem{Base: hp, Disp: d}, xv)
		for s := range acc {
			asm.VFMADD231PS(at(rp, s, d), xv, t[s][j%nacc])
		}
	}
	ptrs := []GPVirtual{rp, hp}
	if pfA != nil {
		for d := 0; d < 2*y.bytes(); d += 64 {
			for s := range acc {
				prefetch(at(pp, s, d))
			}
		}
		ptrs = append(ptrs, pp)
	}
	for _, r := range ptrs {
		asm.ADDQ(U32(2*y.bytes()), r)
	}
	asm.DECQ(cnt)
	asm.JNZ(LabelRef(two))
	asm.Label(one)
	asm.Load(asm.Param("ctx").Len(), cnt)
	asm.SHRQ(U8(shift), cnt)
	asm.TESTQ(U32(1), cnt)
	asm.JZ(LabelRef(half))
	{
		xv := y.vec()
		asm.VMOVUPS(Mem{Base: hp}, xv)
		for s := range acc {
			asm.VFMADD231PS(at(rp, s, 0), xv, t[s][0])
		}
		asm.ADDQ(U32(y.bytes()), rp)
		asm.ADDQ(U32(y.bytes()), hp)
	}
	asm.Label(half)
	if y.lanes == 16 {
		asm.Load(asm.Param("ctx").Len(), cnt)
		asm.TESTQ(U32(8), cnt)
		asm.JZ(LabelRef(done))
		xv := y.vec()
		asm.VMOVUPS_Z(Mem{Base: hp}, k8, xv)
		for s := range acc {
			asm.VFMADD231PS(at(rp, s, 0), xv, k8, t[s][nacc-1])
		}
	}
	asm.Label(done)
	for s := range t {
		for _, v := range t[s][1:] {
			asm.VADDPS(v, t[s][0], t[s][0])
		}
	}
}
