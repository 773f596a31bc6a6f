package main

import (
	"math/bits"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The fused decode step of the reduced-precision family: one kernel per
// storage format and ISA that does what kernels.decodeStep composes from
// matVec, expShift and matTVec, over blocks of eight rows, with no call or Go
// loop between the scores, the softmax and the context of a block (the
// structure of dotSoftmaxMatTVec, with keys and values apart and widened as
// they are read).

// stepPrefetchBlocks16 and stepPrefetchBlocksQ8 are how many blocks of eight
// rows ahead the prefetching variant of the fused step prefetches its key and
// value rows, powers of 2: for 16-bit rows 2 blocks, for Q8 rows (36 bytes per
// 32 values against 64) 4, about the same distance in bytes (kernels/DESIGN.md,
// "Decode kernels and the fused step").
const (
	stepPrefetchBlocks16 = 2
	stepPrefetchBlocksQ8 = 4
)

// stepFormat is what the fused step needs to know of a storage format.
type stepFormat struct {
	name string
	// q8 tells an 8-bit block format (columns in whole blocks of 32, a
	// float32 scale per block) from a 16-bit one (one column a vector lane).
	q8   bool
	half half // the 16-bit widening, if not q8
	// vnni (Q8Q8): the query is 8-bit blocks too (h []byte, len(h)/36
	// blocks), the scores by VPDPBUSD (lowprec_vnni.go); AVX-512 only.
	vnni bool
}

// prefetchBlocks is how many blocks ahead the prefetching step of format f
// prefetches.
func (f stepFormat) prefetchBlocks() int {
	if f.q8 {
		return stepPrefetchBlocksQ8
	}
	return stepPrefetchBlocks16
}

// genDecodeSteps emits the fused steps of every format on the dual-width
// ISAs (avx512 computes in YMM, avx512z in ZMM).
func genDecodeSteps() {
	for _, s := range dualISAs {
		formats := []stepFormat{{name: "BF16", half: bf16}, {name: "F16", half: f16}, {name: "Q8", q8: true}}
		if s.evex {
			formats = append(formats, stepFormat{name: "Q8Q8", q8: true, vnni: true})
		}
		for _, f := range formats {
			// The plain kernel and the prefetching ones into L1 and L2;
			// an EVEX Q8 context in the forms the route table pairs with
			// them (kernels' route.q8Stack and pfL2): the plain kernel in
			// both, into L2 only the stack form.
			genDecodeStep(s, f, false, pfL1, q8ScaleVec)
			genDecodeStep(s, f, true, pfL1, q8ScaleVec)
			l2Form := q8ScaleVec
			if f.q8 && s.evex {
				l2Form = q8ScaleStack
				genDecodeStep(s, f, false, pfL1, q8ScaleStack)
			}
			genDecodeStep(s, f, true, pfL2, l2Form)
		}
	}
}

// genDecodeStep emits decodeStep<F>[Stack]<ISA>(ctx, scores []float32, k []byte, ldk
// int, v []byte, ldv int, h []float32, m, l float32) (float32, float32, int):
// one streaming-softmax pass over the len(scores) rows of the key matrix K
// (len(h) columns) and the value matrix V (len(ctx) columns), stored in
// format F with row strides ldk and ldv in bytes. len(scores) is a multiple
// of 8; len(h) and len(ctx) are multiples of 8 and ≥ 8 (of 32 for Q8), and
// (m, l) is the running max and sum, returned updated with 0, or with 1 as
// soon as a block holds a score that is not finite (ctx partly updated).
//
// Each block of eight rows: the eight scores (one accumulator per row, one
// load of h for eight rows), stored; if their max exceeds m, ctx and l are
// scaled by e^(m−mb); the weights e^(s−m) are added to l and the eight value
// rows, widened, to ctx with those weights. Q8 scores sum each 32-value
// block's products in one vector and add it times the block's scale; the Q8
// context multiplies each row's weight by the block's scale once per block,
// in form form under EVEX (Stack in the name for q8ScaleStack).
//
// With pf, it emits decodeStep<F>PF<ISA>, which also prefetches (PREFETCHT0;
// PREFETCHT1 for decodeStep<F>PFL2<ISA>, lvl pfL2) every line of the eight
// key and eight value rows f.prefetchBlocks() blocks ahead (the current block's when fewer follow), for keys and values
// streamed from memory, in four bursts of four rows: the first key rows
// before the block's scores, the last after them, the first value rows
// before its context and the last after it. One burst of all sixteen rows
// at the block's start read slower from memory (kernels/DESIGN.md).
func genDecodeStep(s *isa, f stepFormat, pf bool, lvl pfLevel, form q8Scale) {
	y := ymmOf(s)   // the eight scores of a block
	w := evexYMM(s) // the rows and ctx
	wide := w.lanes == 16
	name := s.name("decodeStep" + f.name + form.suffix())
	if pf {
		name = s.name("decodeStep" + f.name + form.suffix() + "PF" + lvl.suffix())
	}
	hType := "[]float32"
	if f.vnni {
		hType = "[]byte"
	}
	TEXT(name, NOSPLIT, "func(ctx, scores []float32, k []byte, ldk int, v []byte, ldv int, h "+hType+", m, l float32) (float32, float32, int)")
	asm.Doc(name+" adds one streaming-softmax pass of a dot-product attention step over",
		"the rows of the "+f.name+" keys K and values V (row strides ldk, ldv bytes) to ctx and",
		"the running max m and sum l, and returns them with 0, or 1 on a score that is not finite.")
	var k8 OpmaskVirtual
	if wide && !f.q8 {
		k8 = halfMask()
	}
	sc := load(asm.Param("scores").Base())
	n := load(asm.Param("scores").Len())
	kp, ldk := load(asm.Param("k").Base()), load(asm.Param("ldk"))
	vp, ldv := load(asm.Param("v").Base()), load(asm.Param("ldv"))
	ldk3, ldv3 := asm.GP64(), asm.GP64()
	asm.LEAQ(Mem{Base: ldk, Index: ldk, Scale: 2}, ldk3)
	asm.LEAQ(Mem{Base: ldv, Index: ldv, Scale: 2}, ldv3)
	rowsAt := func(p, q, ld, ld3 GPVirtual, disp int) []Mem {
		return []Mem{
			{Base: p, Disp: disp}, {Base: p, Index: ld, Scale: 1, Disp: disp},
			{Base: p, Index: ld, Scale: 2, Disp: disp}, {Base: p, Index: ld3, Scale: 1, Disp: disp},
			{Base: q, Disp: disp}, {Base: q, Index: ld, Scale: 1, Disp: disp},
			{Base: q, Index: ld, Scale: 2, Disp: disp}, {Base: q, Index: ld3, Scale: 1, Disp: disp},
		}
	}
	e := newExpGen(y)
	// evenOddCtx: the bfloat16 context by the even/odd widening, ctx
	// permuted at entry and back at every exit.
	evenOddCtx := f.name == "BF16"

	mloc := asm.AllocLocal(8)
	wloc := asm.AllocLocal(32) // Q8: the block's eight weights
	var wsloc Mem              // Q8 in form q8ScaleStack: those times the block's scales
	if f.q8 && w.evex && form == q8ScaleStack {
		wsloc = asm.AllocLocal(32)
	}
	{
		t := asm.XMM()
		asm.Load(asm.Param("m"), t)
		asm.VMOVSS(t, mloc)
	}
	lsum := y.vec()
	asm.Load(asm.Param("l"), lsum.AsX())
	negM := y.vec()
	negate(mloc, negM)

	// vectors sets cnt to the number of whole vectors of w in the slice
	// param's length (for Q8: of 32-value blocks).
	vectors := func(param string, cnt GPVirtual) {
		asm.Load(asm.Param(param).Len(), cnt)
		if f.q8 {
			asm.SHRQ(U8(5), cnt)
		} else {
			asm.SHRQ(U8(bits.TrailingZeros(uint(w.lanes))), cnt)
		}
	}
	// halfTail jumps to skip unless the param's length ends with a half
	// vector (wide 16-bit formats only).
	halfTail := func(param string, cnt GPVirtual, skip string) {
		asm.Load(asm.Param(param).Len(), cnt)
		asm.TESTQ(U32(8), cnt)
		asm.JZ(LabelRef(skip))
	}
	// widen16 loads w.lanes (or 8 under k8) 16-bit values at m as float32s.
	widen16 := func(m Mem, k Op) VecVirtual {
		t := w.vec()
		f.half.widen(m, k, t)
		return t
	}
	// widen8 loads w.lanes int8 values at m as float32s.
	widen8 := func(m Mem) VecVirtual {
		t := w.vec()
		asm.VPMOVSXBD(m, t)
		asm.VCVTDQ2PS(t, t)
		return t
	}

	// widenScores adds to acc the key rows' products with h by widening
	// (every format but Q8Q8): cnt holds the whole vectors (Q8: blocks) of
	// columns left.
	widenScores := func(cnt, p, q, hp GPVirtual, acc []VecVirtual) {
		asm.Label("dot")
		asm.TESTQ(cnt, cnt)
		asm.JZ(LabelRef("dotHalf"))
		if f.q8 {
			per := 32 / w.lanes
			hv := make([]Op, per)
			for j := range hv {
				if w.evex {
					t := w.vec()
					asm.VMOVUPS(Mem{Base: hp, Disp: w.bytes() * j}, t)
					hv[j] = t
				} else {
					hv[j] = Mem{Base: hp, Disp: w.bytes() * j}
				}
			}
			for i, m := range rowsAt(p, q, ldk, ldk3, 0) {
				var p0 VecVirtual
				for j := range hv {
					qv := widen8(m.Offset(4 + w.lanes*j))
					if j == 0 {
						asm.VMULPS(hv[j], qv, qv)
						p0 = qv
					} else {
						asm.VFMADD231PS(hv[j], qv, p0)
					}
				}
				fmaBcast(bcastOf(w, m), p0, acc[i])
			}
			asm.ADDQ(U32(q8Bytes), p)
			asm.ADDQ(U32(q8Bytes), q)
			asm.ADDQ(U32(4*32), hp)
		} else {
			xv := w.vec()
			asm.VMOVUPS(Mem{Base: hp}, xv)
			for i, m := range rowsAt(p, q, ldk, ldk3, 0) {
				asm.VFMADD231PS(widen16(m, nil), xv, acc[i])
			}
			asm.ADDQ(U32(2*w.lanes), p)
			asm.ADDQ(U32(2*w.lanes), q)
			asm.ADDQ(U32(w.bytes()), hp)
		}
		asm.DECQ(cnt)
		asm.JMP(LabelRef("dot"))
		asm.Label("dotHalf")
		if wide && !f.q8 {
			halfTail("h", cnt, "dotDone")
			xv := w.vec()
			asm.VMOVUPS_Z(Mem{Base: hp}, k8, xv)
			for i, m := range rowsAt(p, q, ldk, ldk3, 0) {
				asm.VFMADD231PS(widen16(m, k8), xv, acc[i])
			}
		}
	}

	var vnni q8q8Consts
	var khi OpmaskVirtual // ZMM Q8Q8: the high eight lanes
	switch {
	case f.vnni && wide:
		vnni = newQ8Q8Consts(w)
		r := asm.GP32()
		khi = asm.K()
		asm.MOVL(U32(0xff00), r)
		asm.KMOVW(r, khi)
	case f.vnni:
		vnni = newQ8Q8Consts(y)
	}
	var sv VecVirtual
	scores := func() {
		p, q, hp, cnt := asm.GP64(), asm.GP64(), asm.GP64(), asm.GP64()
		asm.MOVQ(kp, p)
		asm.LEAQ(Mem{Base: kp, Index: ldk, Scale: 4}, q)
		asm.Load(asm.Param("h").Base(), hp)
		acc := make([]VecVirtual, 8)
		if f.vnni && wide {
			acc = acc[:4] // rows i and i+4 in the halves of a ZMM
		}
		for i := range acc {
			if f.vnni && !wide {
				acc[i] = y.vec() // one 32-value block a YMM
			} else {
				acc[i] = w.vec()
			}
			w.zero(acc[i])
		}
		if f.vnni {
			// cnt counts the bytes of the query's blocks left.
			asm.Load(asm.Param("h").Len(), cnt)
			asm.Label("dot")
			asm.TESTQ(cnt, cnt)
			asm.JZ(LabelRef("dotDone"))
			if wide {
				vnni.blockPairs(Mem{Base: hp}, rowsAt(p, q, ldk, ldk3, 0), acc, khi)
			} else {
				vnni.block(Mem{Base: hp}, rowsAt(p, q, ldk, ldk3, 0), acc)
			}
			asm.ADDQ(U32(q8Bytes), p)
			asm.ADDQ(U32(q8Bytes), q)
			asm.ADDQ(U32(q8Bytes), hp)
			asm.SUBQ(U32(q8Bytes), cnt)
			asm.JMP(LabelRef("dot"))
		} else if f.name == "BF16" {
			// Pairs of vectors first, by the even/odd widening; cnt is the
			// columns left, then their whole vectors.
			asm.Load(asm.Param("h").Len(), cnt)
			bf16PairsStep(w, acc, rowsAt(p, q, ldk, ldk3, 0), []GPVirtual{p, q}, hp, cnt)
			asm.SHRQ(U8(bits.TrailingZeros(uint(w.lanes))), cnt)
		} else {
			vectors("h", cnt)
		}
		if !f.vnni {
			widenScores(cnt, p, q, hp, acc)
		}
		asm.Label("dotDone")
		if len(acc) == 4 {
			for i := range 4 {
				hi := y.vec()
				asm.VEXTRACTF64X4(U8(1), acc[i], hi)
				acc[i] = acc[i].AsY().(VecVirtual)
				acc = append(acc, hi)
			}
		}
		sv = y.vec()
		joinHalves(y, y.hsum4(acc[0], acc[1], acc[2], acc[3]), y.hsum4(acc[4], acc[5], acc[6], acc[7]), sv)
		asm.VMOVUPS(sv, Mem{Base: sc})
		if evenOddCtx {
			jumpIfNotFinite(y, sv, "restoreSpecial")
		} else {
			jumpIfNotFinite(y, sv, "special")
		}
	}

	var b []VecVirtual // 16-bit formats: the block's weights, one per row, broadcast
	weights := func() {
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
			fv := e.applyNonPositive(dv)
			asm.VMULPS(fv, lsum, lsum)
			if wide {
				fz := w.vec()
				asm.VBROADCASTSS(fv.AsX(), fz)
				fv = fz
			}
			cp, cnt := asm.GP64(), asm.GP64()
			asm.Load(asm.Param("ctx").Base(), cp)
			asm.Load(asm.Param("ctx").Len(), cnt)
			asm.SHRQ(U8(bits.TrailingZeros(uint(w.lanes))), cnt)
			asm.Label("rescale")
			asm.TESTQ(cnt, cnt)
			asm.JZ(LabelRef("rescaleHalf"))
			t := w.vec()
			asm.VMULPS(Mem{Base: cp}, fv, t)
			asm.VMOVUPS(t, Mem{Base: cp})
			asm.ADDQ(U32(w.bytes()), cp)
			asm.DECQ(cnt)
			asm.JMP(LabelRef("rescale"))
			asm.Label("rescaleHalf")
			if wide && !f.q8 {
				halfTail("ctx", cnt, "rescaleDone")
				t := w.vec()
				asm.VMOVUPS_Z(Mem{Base: cp}, k8, t)
				asm.VMULPS(fv, t, t)
				asm.VMOVUPS(t, k8, Mem{Base: cp})
			}
			asm.Label("rescaleDone")
			negate(mloc, negM)
		}
		asm.Label("weights")
		asm.VADDPS(negM, sv, sv)
		ev := e.applyNonPositive(sv)
		asm.VADDPS(ev, lsum, lsum)
		if f.q8 {
			asm.VMOVUPS(ev, wloc)
			return
		}
		lane := laneBroadcaster(w, ev)
		b = make([]VecVirtual, 8)
		for i := range b {
			b[i] = lane(i)
		}
	}

	context := func() {
		p, q, cp, cnt := asm.GP64(), asm.GP64(), asm.GP64(), asm.GP64()
		asm.MOVQ(vp, p)
		asm.LEAQ(Mem{Base: vp, Index: ldv, Scale: 4}, q)
		asm.Load(asm.Param("ctx").Base(), cp)
		if evenOddCtx {
			// Pairs of vectors of columns by the even/odd widening, into
			// ctx held in even/odd order (permuteCtx); cnt is then the
			// whole vectors left (0 or 1).
			asm.Load(asm.Param("ctx").Len(), cnt)
			asm.SHRQ(U8(bits.TrailingZeros(uint(2*w.lanes))), cnt)
			hiMask := bcastBits(w, 0xffff0000)
			asm.Label("ctxPairs")
			asm.TESTQ(cnt, cnt)
			asm.JZ(LabelRef("ctxPairsEnd"))
			ae, ao := w.vec(), w.vec()
			asm.VMOVUPS(Mem{Base: cp}, ae)
			asm.VMOVUPS(Mem{Base: cp, Disp: w.bytes()}, ao)
			for i, m := range rowsAt(p, q, ldv, ldv3, 0) {
				e, v := widenBF16Pairs(w, m, hiMask)
				asm.VFMADD231PS(e, b[i], ae)
				asm.VFMADD231PS(v, b[i], ao)
			}
			asm.VMOVUPS(ae, Mem{Base: cp})
			asm.VMOVUPS(ao, Mem{Base: cp, Disp: w.bytes()})
			asm.ADDQ(U32(4*w.lanes), p)
			asm.ADDQ(U32(4*w.lanes), q)
			asm.ADDQ(U32(2*w.bytes()), cp)
			asm.DECQ(cnt)
			asm.JMP(LabelRef("ctxPairs"))
			asm.Label("ctxPairsEnd")
			asm.Load(asm.Param("ctx").Len(), cnt)
			asm.ANDQ(U32(2*w.lanes-1), cnt)
			asm.SHRQ(U8(bits.TrailingZeros(uint(w.lanes))), cnt)
		} else {
			vectors("ctx", cnt)
		}
		// The block's weights as vectors, for every block of columns (form
		// q8ScaleVec under EVEX).
		var wv []VecVirtual
		if f.q8 && w.evex && form == q8ScaleVec {
			wv = make([]VecVirtual, 8)
			for i := range wv {
				wv[i] = weightOf(w, form, wloc.Offset(4*i))
			}
		}
		asm.Label("ctxLoop")
		asm.TESTQ(cnt, cnt)
		asm.JZ(LabelRef("ctxHalf"))
		if f.q8 {
			rows := rowsAt(p, q, ldv, ldv3, 0)
			// Each row's weight times the block's scale.
			wq := make([]Op, 8)
			for i, m := range rows {
				var t VecVirtual
				if wv != nil {
					t = wv[i]
				} else {
					t = weightOf(w, form, wloc.Offset(4*i))
				}
				wq[i] = scaledWeight(w, form, t, m, wsloc.Offset(4*i))
			}
			for j := 0; j < 32/w.lanes; j++ {
				acc := w.vec()
				asm.VMOVUPS(Mem{Base: cp, Disp: w.bytes() * j}, acc)
				for i, m := range rows {
					fmaBcast(wq[i], widen8(m.Offset(4+w.lanes*j)), acc)
				}
				asm.VMOVUPS(acc, Mem{Base: cp, Disp: w.bytes() * j})
			}
			asm.ADDQ(U32(q8Bytes), p)
			asm.ADDQ(U32(q8Bytes), q)
			asm.ADDQ(U32(4*32), cp)
		} else {
			acc := w.vec()
			asm.VMOVUPS(Mem{Base: cp}, acc)
			for i, m := range rowsAt(p, q, ldv, ldv3, 0) {
				asm.VFMADD231PS(widen16(m, nil), b[i], acc)
			}
			asm.VMOVUPS(acc, Mem{Base: cp})
			asm.ADDQ(U32(2*w.lanes), p)
			asm.ADDQ(U32(2*w.lanes), q)
			asm.ADDQ(U32(w.bytes()), cp)
		}
		asm.DECQ(cnt)
		asm.JMP(LabelRef("ctxLoop"))
		asm.Label("ctxHalf")
		if wide && !f.q8 {
			halfTail("ctx", cnt, "ctxDone")
			acc := w.vec()
			asm.VMOVUPS_Z(Mem{Base: cp}, k8, acc)
			for i, m := range rowsAt(p, q, ldv, ldv3, 0) {
				asm.VFMADD231PS(widen16(m, k8), b[i], acc)
			}
			asm.VMOVUPS(acc, k8, Mem{Base: cp})
		}
		asm.Label("ctxDone")
	}

	// prefetch emits a prefetch into lvl for every line of rows lo to hi−1
	// of the eight from base (stride ld, rowBytes bytes each)
	// f.prefetchBlocks() blocks ahead, or of the current block when fewer
	// blocks follow (nothing past the matrix).
	prefetch := func(base, ld GPVirtual, rowBytes func(GPVirtual), label string, lo, hi int) {
		t, u, left := asm.GP64(), asm.GP64(), asm.GP64()
		asm.MOVQ(base, t)
		asm.CMPQ(n, U32(8*(f.prefetchBlocks()+1)))
		asm.JB(LabelRef(label + "Near"))
		asm.MOVQ(ld, u)
		asm.SHLQ(U8(3+bits.TrailingZeros(uint(f.prefetchBlocks()))), u)
		asm.ADDQ(u, t)
		asm.Label(label + "Near")
		asm.LEAQ(Mem{Base: t, Index: ld, Scale: 4}, u)
		rowBytes(left)
		asm.Label(label)
		for _, m := range rowsAt(t, u, ld, func() GPVirtual {
			l3 := ldk3
			if ld == ldv {
				l3 = ldv3
			}
			return l3
		}(), 0)[lo:hi] {
			lvl.prefetch(m)
		}
		asm.ADDQ(U32(64), t)
		asm.ADDQ(U32(64), u)
		asm.SUBQ(U32(64), left)
		asm.JA(LabelRef(label))
	}
	rowBytes := func(param string) func(GPVirtual) {
		return func(r GPVirtual) {
			asm.Load(asm.Param(param).Len(), r)
			if f.q8 {
				asm.SHRQ(U8(5), r)
				asm.IMUL3Q(U32(q8Bytes), r, r)
			} else {
				asm.SHLQ(U8(1), r)
			}
		}
	}

	if evenOddCtx {
		permuteCtx(w, false, "permIn")
	}
	asm.Label("block")
	asm.CMPQ(n, U32(8))
	if evenOddCtx {
		asm.JB(LabelRef("restore"))
	} else {
		asm.JB(LabelRef("end"))
	}
	// pf: a quarter of the block's prefetches (four rows of keys or values)
	// before each of its phases.
	if pf {
		prefetch(kp, ldk, rowBytes("h"), "pfK", 0, 4)
	}
	scores()
	if pf {
		prefetch(kp, ldk, rowBytes("h"), "pfKHi", 4, 8)
	}
	weights()
	if pf {
		prefetch(vp, ldv, rowBytes("ctx"), "pfV", 0, 4)
	}
	context()
	if pf {
		prefetch(vp, ldv, rowBytes("ctx"), "pfVHi", 4, 8)
	}
	asm.LEAQ(Mem{Base: kp, Index: ldk, Scale: 8}, kp)
	asm.LEAQ(Mem{Base: vp, Index: ldv, Scale: 8}, vp)
	asm.ADDQ(U32(32), sc)
	asm.SUBQ(U32(8), n)
	asm.JMP(LabelRef("block"))

	if evenOddCtx {
		asm.Label("restore")
		permuteCtx(w, true, "permOut")
		asm.JMP(LabelRef("end"))
		asm.Label("restoreSpecial")
		permuteCtx(w, true, "permOutSpecial")
		asm.JMP(LabelRef("special"))
	}
	stepReturn(y, mloc, lsum)
}

// permuteCtx emits a loop over the whole chunks of 2·lanes elements of the
// ctx parameter that puts each chunk's even-indexed elements, in order, in
// its first lanes and the odd-indexed ones in the rest (the order of
// bfloat16 context by even/odd widening), or with back the reverse.
func permuteCtx(s *isa, back bool, label string) {
	cp, cnt := asm.GP64(), asm.GP64()
	asm.Load(asm.Param("ctx").Base(), cp)
	asm.Load(asm.Param("ctx").Len(), cnt)
	asm.SHRQ(U8(bits.TrailingZeros(uint(2*s.lanes))), cnt)
	var ie, io VecVirtual
	if s.evex && !back {
		ie, io = s.vec(), s.vec()
		asm.VMOVDQU32(evenOdd().Offset(0), ie)
		asm.VMOVDQU32(evenOdd().Offset(64), io)
	}
	asm.Label(label)
	asm.TESTQ(cnt, cnt)
	asm.JZ(LabelRef(label + "End"))
	var lo, hi VecVirtual
	if !back {
		lo, hi = evenOddX(s, cp, ie, io)
	} else {
		e, o, a, b := s.vec(), s.vec(), s.vec(), s.vec()
		asm.VMOVUPS(Mem{Base: cp}, e)
		asm.VMOVUPS(Mem{Base: cp, Disp: s.bytes()}, o)
		asm.VUNPCKLPS(o, e, a) // e0 o0 e1 o1 per 128-bit block
		asm.VUNPCKHPS(o, e, b) // e2 o2 e3 o3 per 128-bit block
		lo, hi = s.vec(), s.vec()
		switch {
		case s.lanes == 16: // blocks a0 b0 a1 b1, then a2 b2 a3 b3
			asm.VSHUFF32X4(U8(0x44), b, a, lo)
			asm.VSHUFF32X4(U8(0xd8), lo, lo, lo)
			asm.VSHUFF32X4(U8(0xee), b, a, hi)
			asm.VSHUFF32X4(U8(0xd8), hi, hi, hi)
		case s.evex:
			asm.VSHUFF32X4(U8(0), b, a, lo)
			asm.VSHUFF32X4(U8(3), b, a, hi)
		default:
			asm.VPERM2F128(U8(0x20), b, a, lo)
			asm.VPERM2F128(U8(0x31), b, a, hi)
		}
	}
	asm.VMOVUPS(lo, Mem{Base: cp})
	asm.VMOVUPS(hi, Mem{Base: cp, Disp: s.bytes()})
	asm.ADDQ(U32(2*s.bytes()), cp)
	asm.DECQ(cnt)
	asm.JMP(LabelRef(label))
	asm.Label(label + "End")
}

// bf16PairsStep adds to acc[i] the bfloat16 dot products of rows[i] with the
// vector at xp two vectors of columns at a time while cols ≥ 2·lanes, as
// bf16Pairs does for the matrix-vector product but with one accumulator per
// row (the fused step's eight rows are eight independent chains, and AVX2
// has no registers for eight more): one load of lanes 32-bit words holds
// 2·lanes values, the even ones widened by a shift left by 16 and the odd ones
// by clearing the low half, each multiplied by the matching elements of x,
// gathered once per step for all rows. Advances ptrs by 4·lanes bytes and xp
// by 8·lanes per step and leaves in cols the columns left.
func bf16PairsStep(s *isa, acc []VecVirtual, rows []Mem, ptrs []GPVirtual, xp, cols GPVirtual) {
	hiMask := bcastBits(s, 0xffff0000)
	var ie, io VecVirtual
	if s.evex {
		ie, io = s.vec(), s.vec()
		asm.VMOVDQU32(evenOdd().Offset(0), ie)
		asm.VMOVDQU32(evenOdd().Offset(64), io)
	}
	asm.Label("pairs")
	asm.CMPQ(cols, U32(2*s.lanes))
	asm.JB(LabelRef("pairsEnd"))
	xe, xo := evenOddX(s, xp, ie, io)
	for r, m := range rows {
		e, v := widenBF16Pairs(s, m, hiMask)
		asm.VFMADD231PS(e, xe, acc[r])
		asm.VFMADD231PS(v, xo, acc[r])
	}
	for _, p := range ptrs {
		asm.ADDQ(U32(4*s.lanes), p)
	}
	asm.ADDQ(U32(8*s.lanes), xp)
	asm.SUBQ(U32(2*s.lanes), cols)
	asm.JMP(LabelRef("pairs"))
	asm.Label("pairsEnd")
}
