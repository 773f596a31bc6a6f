package main

import (
	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func init() { register("softmaxmattvec", genSoftmaxMatTVecFamily) }

func genSoftmaxMatTVecFamily() {
	for _, s := range dualISAs {
		genSoftmaxMatTVec(s)
	}
}

// genSoftmaxMatTVec emits softmaxMatTVec<ISA>(dst, a []float32, lda int,
// x []float32) int, an attention step's softmax and context in one call: x =
// softmax(x) in place and dst += Aᵀ·x. It returns softmax's status; for any
// status but 0 dst is untouched and the Go wrapper finishes the softmax and
// adds the context. len(x) ≥ 1, and for AVX2 len(dst) ≥ 8.
//
// A matrix of at most a register panel of columns (narrowVectors) and a row
// longer than softmaxOne's or softmaxFew's takes softmaxContext: after the max
// pass, one pass computes the exponentials eight rows at a time and adds
// their rows to the panel right away, then scales the weights and the
// context by 1/Σ. Otherwise the kernel runs softmax's passes and then
// matTVec's body, giving their results bit for bit.
func genSoftmaxMatTVec(s *isa) {
	name := s.name("softmaxMatTVec")
	TEXT(name, NOSPLIT, "func(dst, a []float32, lda int, x []float32) int")
	asm.Doc(name+" sets x to its softmax and dst += Aᵀ·x for the len(x)×len(dst)",
		"matrix A with row stride lda, and returns 0; for max x not finite it returns 1",
		"(nothing written), for a NaN in x 2 (x clobbered, dst untouched).")
	x := load(asm.Param("x").Base())
	n := load(asm.Param("x").Len())
	var mx VecVirtual
	ex := softmaxExits{done: "context", special: "special", nan: "nan", one: "one", few: "few"}
	softmaxPasses(s, x, x, n, ex, func(m VecVirtual, nan *nanFlag) {
		mx = m // used by softmaxContext, emitted out of line below
		cols := load(asm.Param("dst").Len())
		w := evexYMM(s)
		asm.CMPQ(cols, U32(narrowVectors(w)*w.lanes))
		asm.JA(LabelRef("wide"))
		nan.jumpIfSet(ex.nan)
		asm.JMP(LabelRef("fused"))
		asm.Label("wide")
	})
	asm.Label(ex.done)
	matTVecBody(s, "done")
	asm.Label("done")
	softmaxReturn(softmaxDone)
	softmaxOutOfLine(s, x, x, n, ex)
	asm.Label("fused")
	softmaxContext(s, x, n, mx, "done")
}

// softmaxContext emits the fused softmax and context for the n > 8 weights
// at x, free of NaN, whose finite maximum is lane 0 of m, and a matrix of at
// most a panel of columns, and jumps to done.
//
// Each block of eight rows: e = exp(x − m) in one vector, stored over x and
// summed, then its eight rows of A added to the panel with weights e. At the
// end inv = 1/Σe, x *= inv and dst += inv·acc. The e have the bits of
// Softmax's exponentials; the sum runs in a different order, so the weights
// may differ from Softmax's in the last place, and the context, formed from
// unnormalised weights and scaled once, is within γₙ₊₂·(|dst| + Σ|xᵣ·A[r,·]|)
// of dst + Σ xᵣ·A[r,·] for the weights x returned. AVX2 takes the rows past
// the last whole block from the last full vector of x, exponentiated before
// the loop and stored after it (the lanes stored twice get the same bits);
// AVX-512 masks them. The weights are computed in YMM vectors; so is the
// panel of columns but for avx512z, whose panel is ZMM vectors.
func softmaxContext(s *isa, x, n GPVirtual, m VecVirtual, done string) {
	y := ymmOf(s)   // the weights, a block of eight rows at a time
	w := evexYMM(s) // the panel of columns
	const lanes = 8
	negM := y.vec()
	negate(m, negM)
	// AVX2 keeps −m in memory: its 16 registers hold the panel, the running
	// sum and the exponential.
	var negMem, stash Mem
	if !y.evex {
		negMem, stash = asm.AllocLocal(32), asm.AllocLocal(32)
		asm.VMOVUPS(negM, negMem)
	}
	d := load(asm.Param("dst").Base())
	a := load(asm.Param("a").Base())
	lda := load(asm.Param("lda"))
	asm.SHLQ(U8(2), lda)
	cols := load(asm.Param("dst").Len())
	reserve := 8 // AVX2: the sum, the exponential's five temporaries, two in flight
	if y.evex {
		reserve = 10 // and −m
	}
	forEachPanel(w, "fused", cols, reserve, func(p *panel) {
		lbl := p.label
		e := newExpGen(y)
		p.zero()
		sum := y.vec()
		y.zero(sum)
		// addExp adds e to the running sum (the lanes of k only).
		addExp := func(ev VecVirtual, k OpmaskVirtual) {
			if k != nil {
				asm.VADDPS(ev, sum, k, sum)
				return
			}
			asm.VADDPS(ev, sum, sum)
		}
		// subM returns a new vector x − m for the x in v.
		subM := func(v VecVirtual) {
			if y.evex {
				asm.VADDPS(negM, v, v)
			} else {
				asm.VADDPS(negMem, v, v)
			}
		}

		rem := asm.GP64()
		asm.MOVQ(n, rem)
		asm.ANDQ(U32(lanes-1), rem)
		if !y.evex {
			// The last full vector of x, before the loop overwrites it.
			asm.JZ(LabelRef(lbl("Main")))
			v := y.vec()
			asm.VMOVUPS(Mem{Base: x, Index: n, Scale: 4, Disp: -32}, v)
			subM(v)
			ev := e.applyNonPositive(v)
			asm.VMOVUPS(ev, stash)
			mask := y.tailMask(rem)
			asm.VANDPS(mask.y, ev, ev)
			addExp(ev, nil)
			asm.Label(lbl("Main"))
		}
		xp, ap, cnt := asm.GP64(), asm.GP64(), asm.GP64()
		asm.MOVQ(x, xp)
		asm.MOVQ(a, ap)
		asm.MOVQ(n, cnt)
		asm.SHRQ(U8(3), cnt)
		// expBlock exponentiates the block at xp+disp in place and sums it.
		expBlock := func(disp int) VecVirtual {
			v := y.vec()
			asm.VMOVUPS(Mem{Base: xp, Disp: disp}, v)
			subM(v)
			ev := e.applyNonPositive(v)
			asm.VMOVUPS(ev, Mem{Base: xp, Disp: disp})
			addExp(ev, nil)
			return ev
		}
		// addBlock adds the block's eight rows at ap with the weights ev,
		// each broadcast from ev: its 128-bit half in both halves, then its
		// lane in all four.
		addBlock := func(ev VecVirtual) {
			lane := laneBroadcaster(w, ev)
			for j := 0; j < lanes; j++ {
				p.fma(ap, lane(j), j%len(p.acc))
				asm.ADDQ(lda, ap)
			}
			asm.ADDQ(U32(4*lanes), xp)
		}
		// Software-pipelined: the next block's exponentials come before
		// this block's rows in program order, so that their latency overlaps
		// the FMA chains rather than adding to them.
		ev := expBlock(0)
		asm.DECQ(cnt)
		asm.JZ(LabelRef(lbl("LastBlock")))
		asm.Label(lbl("Block"))
		next := expBlock(4 * lanes)
		addBlock(ev)
		asm.VMOVAPS(next, ev)
		asm.DECQ(cnt)
		asm.JNZ(LabelRef(lbl("Block")))
		asm.Label(lbl("LastBlock"))
		addBlock(ev)
		// The rows past the last block.
		asm.TESTQ(rem, rem)
		asm.JZ(LabelRef(lbl("Sum")))
		if y.evex {
			t := y.tailMask(rem)
			v := y.vec()
			asm.VMOVUPS_Z(Mem{Base: xp}, t.k, v)
			subM(v)
			ev := e.applyNonPositive(v)
			asm.VMOVUPS(ev, t.k, Mem{Base: xp})
			addExp(ev, t.k)
		} else {
			v := y.vec()
			asm.VMOVUPS(stash, v)
			asm.VMOVUPS(v, Mem{Base: x, Index: n, Scale: 4, Disp: -32})
		}
		p.rowLoop("Rest", ap, lda, xp, rem)

		asm.Label(lbl("Sum"))
		inv := broadcastReciprocal(y, y.hsum(sum))
		q, c := asm.GP64(), asm.GP64()
		asm.MOVQ(x, q)
		asm.MOVQ(n, c)
		y.scaleBody(lbl("Scale"), q, c, inv)
		if w.lanes != y.lanes {
			iw := w.vec()
			asm.VBROADCASTSS(inv.AsX(), iw)
			inv = iw
		}
		// dst += inv·acc, every vector of dst read before any is stored
		// (the AVX2 last vector overlaps the one before).
		p.merge()
		last := len(p.acc[0]) - 1
		for j, acc := range p.acc[0] {
			if j == last && y.evex {
				t := w.vec()
				asm.VMOVUPS_Z(p.at(d, j), p.k, t)
				asm.VFMADD213PS(t, inv, acc)
				continue
			}
			asm.VFMADD213PS(p.at(d, j), inv, acc)
		}
		for j, acc := range p.acc[0] {
			if j == last && y.evex {
				asm.VMOVUPS(acc, p.k, p.at(d, j))
				continue
			}
			asm.VMOVUPS(acc, p.at(d, j))
		}
		asm.JMP(LabelRef(done))
	})
}
