package main

import (
	"fmt"
	"strings"

	"github.com/mmcloughlin/avo/gotypes"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func init() {
	register("additive_backward", genAdditiveBackwardFamily)
	registerTrial("additive_backward", genAdditiveBackwardTrials)
}

// genAdditiveBackwardFamily emits the backward of AdditiveScore, with and
// without the key gradient. Like AdditiveScore it computes in ZMM on
// AVX-512: Tanh's throughput bounds it.
func genAdditiveBackwardFamily() {
	for _, s := range isas {
		for _, withDK := range []bool{true, false} {
			genAdditiveBackward(s, additiveBackwardName(withDK, 0), withDK, additiveBackRows)
		}
	}
}

// genAdditiveBackwardTrials emits the kernels with one and two rows per
// block, and four where the registers hold them (AVX-512 without dk), named
// additiveScoreBackward[NoDK]R<rows><ISA>.
func genAdditiveBackwardTrials() {
	for _, s := range isas {
		for _, withDK := range []bool{true, false} {
			for _, rows := range []int{1, 2, 4} {
				if rows < additiveBackRows || s.evex && !withDK {
					genAdditiveBackward(s, additiveBackwardName(withDK, rows), withDK, rows)
				}
			}
		}
	}
}

// additiveBackwardName is the kernel's name before the ISA suffix, with the
// rows per block for a trial (rows > 0).
func additiveBackwardName(withDK bool, rows int) string {
	name := "additiveScoreBackward"
	if !withDK {
		name += "NoDK"
	}
	if rows > 0 {
		name += fmt.Sprintf("R%d", rows)
	}
	return name
}

// additiveBackRows is the number of rows of K a column pass takes together:
// their tanh chains are independent and overlap in the pipeline, and they
// share the loads of q and v and the updates of dq and dv. The rows of a
// block are the next ones with ds ≠ 0: masked rows are skipped, never read.
// Three rows measured faster than one or two, and as fast as four without dk
// on AVX-512 (DESIGN.md); with dk they take 14 general registers, and on AVX2
// a fourth row does not fit in 16 YMM.
const additiveBackRows = 3

// genAdditiveBackward emits kernel<ISA>(dq, dv, dk []float32, lddk int,
// k []float32, ldk int, q, v, ds []float32), or without dk and lddk, taking R
// rows per block: for each row s of the len(ds)×len(q)
// matrix K (row stride ldk) with ds[s] ≠ 0, in increasing s, and each column
// i, t = tanh(q[i] + K[s,i]), w = 1 − t², p = ds[s]·v[i], then dv[i] +=
// ds[s]·t, dq[i] += p·w and dk[s,i] += p·w (row stride lddk), each a fused
// multiply-add: the order and roundings of fallback.AdditiveScoreBackwardAdd,
// so its bits. len(q) ≥ 1, and on AVX2 len(q) ≥ 8.
//
// Column tails: AVX-512 loads them zero-masked and stores them masked. AVX2
// computes the last full vector of the columns, whose lanes before the tail
// the whole vectors have already updated, and blends: the tail's lanes get
// the new values, the others keep the values just loaded.
func genAdditiveBackward(s *isa, kernel string, withDK bool, R int) {
	sig := "func(dq, dv, dk []float32, lddk int, k []float32, ldk int, q, v, ds []float32)"
	if !withDK {
		sig = "func(dq, dv, k []float32, ldk int, q, v, ds []float32)"
	}
	name := s.name(kernel)
	TEXT(name, NOSPLIT, sig)
	if withDK {
		asm.Doc(name+" adds, for the rows s of K with ds[s] ≠ 0, ds[s]·tanh(q + K_s) to dv",
			"and ds[s]·v∘(1 − tanh²(q + K_s)) to dq and to row s of dK (stride lddk), in",
			"increasing s, as fallback.AdditiveScoreBackwardAdd does.")
	} else {
		asm.Doc(name + " is " + s.name(strings.Replace(kernel, "NoDK", "", 1)) + " without dk.")
	}
	q, v := load(asm.Param("q").Base()), load(asm.Param("v").Base())
	dq, dv := load(asm.Param("dq").Base()), load(asm.Param("dv").Base())
	cols := load(asm.Param("q").Len())
	g := newTanhGen(s)
	one := newConst(s, 1)

	// end: the byte offset past the whole vectors of the columns; rem: the
	// tail's length.
	rem, end := asm.GP64(), asm.GP64()
	asm.MOVQ(cols, rem)
	asm.ANDQ(U32(s.lanes-1), rem)
	asm.MOVQ(cols, end)
	asm.SUBQ(rem, end)
	asm.SHLQ(U8(2), end)
	var t tail
	var mask Mem // AVX2: the tail's lanes of the last full vector
	if s.evex {
		t = s.tailMask(rem)
	} else {
		m := s.tailMask(rem)
		mask = asm.AllocLocal(s.bytes())
		asm.VMOVUPS(m.y, mask)
	}

	kr, dkr := make([]GPVirtual, R), make([]GPVirtual, R)
	dsv := make([]VecVirtual, R)
	for r := range kr {
		kr[r] = asm.GP64()
		if withDK {
			dkr[r] = asm.GP64()
		}
		dsv[r] = s.vec()
	}
	row := asm.GP64() // the next row of K to look at
	asm.XORQ(row, row)

	// Gather slot r: the next row with ds ≠ 0 (its bits, sign cleared, are
	// not zero: NaN counts), or to left(r) when none is left.
	left := func(r int) string { return fmt.Sprintf("left%d", r) }
	asm.Label("gather")
	for r := 0; r < R; r++ {
		look, found := fmt.Sprintf("look%d", r), fmt.Sprintf("found%d", r)
		asm.Label(look)
		asm.CMPQ(row, addrOf(asm.Param("ds").Len()))
		asm.JAE(LabelRef(left(r)))
		dsp, bits := asm.GP64(), asm.GP32()
		asm.MOVQ(addrOf(asm.Param("ds").Base()), dsp)
		asm.MOVL(Mem{Base: dsp, Index: row, Scale: 4}, bits)
		asm.TESTL(U32(0x7fffffff), bits)
		asm.JNZ(LabelRef(found))
		asm.INCQ(row)
		asm.JMP(LabelRef(look))
		asm.Label(found)
		asm.VBROADCASTSS(Mem{Base: dsp, Index: row, Scale: 4}, dsv[r])
		rowAt := func(base, ld string, dst GPVirtual) {
			off := asm.GP64()
			asm.MOVQ(paramAddr(ld), off)
			asm.IMULQ(row, off)
			asm.MOVQ(addrOf(asm.Param(base).Base()), dst)
			asm.LEAQ(Mem{Base: dst, Index: off, Scale: 4}, dst)
		}
		rowAt("k", "ldk", kr[r])
		if withDK {
			rowAt("dk", "lddk", dkr[r])
		}
		asm.INCQ(row)
	}
	b := additiveBack{s: s, g: g, one: one, q: q, v: v, dq: dq, dv: dv, end: end, rem: rem, t: t, mask: mask, withDK: withDK}
	b.columns("block", kr, dkr, dsv)
	asm.JMP(LabelRef("gather"))

	// Fewer than R rows left: slot r found none, slots below r hold rows.
	for r := R - 1; r >= 1; r-- {
		asm.Label(left(r))
		var dks []GPVirtual
		if withDK {
			dks = dkr[:r]
		}
		b.columns(fmt.Sprintf("rows%d", r), kr[:r], dks, dsv[:r])
		asm.JMP(LabelRef(left(0)))
	}
	asm.Label(left(0))
	asm.VZEROUPPER()
	asm.RET()
}

// additiveBack holds what the column passes of genAdditiveBackward share.
type additiveBack struct {
	s            *isa
	g            *tanhGen
	one          vconst
	q, v, dq, dv GPVirtual
	end, rem     GPVirtual
	t            tail
	mask         Mem
	withDK       bool
}

// columns emits the pass over every column for the rows at kr (dK rows at
// dkr, gradients ds broadcast in dsv), labels prefixed by name.
func (b *additiveBack) columns(name string, kr, dkr []GPVirtual, dsv []VecVirtual) {
	s := b.s
	off := asm.GP64()
	asm.XORQ(off, off)
	at := func(p GPVirtual) Mem { return Mem{Base: p, Index: off, Scale: 1} }
	asm.Label(name + "Vector")
	asm.CMPQ(off, b.end)
	asm.JAE(LabelRef(name + "Tail"))
	b.step(kr, dkr, dsv, false, func(p GPVirtual, v VecVirtual) { asm.VMOVUPS(at(p), v) },
		func(v VecVirtual, p GPVirtual, _ VecVirtual) { asm.VMOVUPS(v, at(p)) })
	asm.ADDQ(U32(s.bytes()), off)
	asm.JMP(LabelRef(name + "Vector"))

	asm.Label(name + "Tail")
	asm.TESTQ(b.rem, b.rem)
	asm.JZ(LabelRef(name + "Done"))
	if s.evex {
		b.step(kr, dkr, dsv, false, func(p GPVirtual, v VecVirtual) { asm.VMOVUPS_Z(at(p), b.t.k, v) },
			func(v VecVirtual, p GPVirtual, _ VecVirtual) { asm.VMOVUPS(v, b.t.k, at(p)) })
	} else {
		// The last full vector, at off + 4·rem − one vector.
		asm.LEAQ(Mem{Base: off, Index: b.rem, Scale: 4, Disp: -s.bytes()}, off)
		m := s.vec()
		b.step(kr, dkr, dsv, true, func(p GPVirtual, v VecVirtual) { asm.VMOVUPS(at(p), v) },
			func(v VecVirtual, p GPVirtual, old VecVirtual) {
				asm.VMOVUPS(b.mask, m)
				asm.VBLENDVPS(m, v, old, v)
				asm.VMOVUPS(v, at(p))
			})
	}
	asm.Label(name + "Done")
}

// step emits one vector of columns for the rows at kr: load(p, v) loads the
// vector of the row (or vector) at p into v, store(v, p, old) stores v there,
// old being the value load gave when keep is set (for the AVX2 tail's
// blend), nil otherwise.
func (b *additiveBack) step(kr, dkr []GPVirtual, dsv []VecVirtual, keep bool, load func(p GPVirtual, v VecVirtual), store func(v VecVirtual, p GPVirtual, old VecVirtual)) {
	s := b.s
	qv, vv := s.vec(), s.vec()
	load(b.q, qv)
	load(b.v, vv)
	group := additiveTanhGroupAVX2
	if s.evex {
		group = additiveTanhGroupAVX512
	}
	ts := make([]VecVirtual, 0, len(kr))
	for r0 := 0; r0 < len(kr); r0 += group {
		var xs []VecVirtual
		for r := r0; r < min(r0+group, len(kr)); r++ {
			x := s.vec()
			load(kr[r], x)
			asm.VADDPS(x, qv, x) // q + K[s]
			xs = append(xs, x)
		}
		ts = append(ts, b.g.applyN(xs...)...)
	}
	// accumulator returns the vector at p and a copy to update if keep, else
	// the vector twice.
	accumulator := func(p GPVirtual) (old, acc VecVirtual) {
		old = s.vec()
		load(p, old)
		if !keep {
			return nil, old
		}
		acc = s.vec()
		asm.VMOVAPS(old, acc)
		return old, acc
	}
	// dv += ds·t, row by row.
	old, acc := accumulator(b.dv)
	for r, th := range ts {
		asm.VFMADD231PS(th, dsv[r], acc)
	}
	store(acc, b.dv, old)
	// dq += p·w and dk[s] += p·w, with w = 1 − t² and p = ds·v.
	oldq, accq := accumulator(b.dq)
	for r, w := range ts {
		fnmadd213(b.one, w, w) // 1 − t²
		p := s.vec()
		asm.VMULPS(vv, dsv[r], p)
		asm.VFMADD231PS(w, p, accq)
		if b.withDK {
			oldk, acck := accumulator(dkr[r])
			asm.VFMADD231PS(w, p, acck)
			store(acck, dkr[r], oldk)
		}
	}
	store(accq, b.dq, oldq)
}

// addrOf returns the frame address of an argument component.
func addrOf(c gotypes.Component) Mem {
	b, err := c.Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

// fnmadd213 emits p = c − p·v.
func fnmadd213(c vconst, v, p VecVirtual) {
	if c.r != nil {
		asm.VFNMADD213PS(c.r, v, p)
	} else if c.s.evex {
		asm.VFNMADD213PS_BCST(c.mem, v, p)
	} else {
		asm.VFNMADD213PS(c.mem, v, p)
	}
}
