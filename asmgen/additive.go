package main

import (
	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func init() { register("additive", genAdditiveFamily) }

func genAdditiveFamily() {
	for _, s := range isas {
		genAdditive(s)
	}
}

// additiveRowsAVX2 and additiveRowsAVX512 are the numbers of rows of K scored
// together: their tanh chains are independent, so they overlap in the
// pipeline, and they share each load of q and v. Tanh's throughput bounds the
// kernel (DESIGN.md).
var additiveRowsAVX2, additiveRowsAVX512 = 4, 6

// genAdditive emits additiveScore<ISA>(dst, k []float32, ldk int, q, v []float32):
// dst[s] = Σᵢ v[i]·tanh(q[i] + K[s,i]) for the len(dst)×len(q) matrix K with
// row stride ldk, len(q) ≥ 1. The tanh values stay in registers.
//
// Column tails: AVX-512 loads them zero-masked (tanh(0+0)·0 = 0); AVX2 reloads
// the last full vector of q and of each row and multiplies by v's last full
// vector with the lanes before the tail zeroed (0·tanh is 0, or NaN only where
// that element already made the score NaN). AVX2 rows shorter than a vector
// are copied into zero-padded local vectors.
func genAdditive(s *isa) {
	name := s.name("additiveScore")
	TEXT(name, NOSPLIT, "func(dst, k []float32, ldk int, q, v []float32)")
	asm.Doc(name+" sets dst[s] = Σ v[i]·tanh(q[i] + K[s,i]) for the len(dst)×len(q)",
		"matrix K with row stride ldk; len(q) ≥ 1, len(v) ≥ len(q).")
	dst := load(asm.Param("dst").Base())
	rows := load(asm.Param("dst").Len())
	a := load(asm.Param("k").Base())
	ldk := load(asm.Param("ldk"))
	asm.SHLQ(U8(2), ldk) // row stride in bytes
	q := load(asm.Param("q").Base())
	v := load(asm.Param("v").Base())
	cols := load(asm.Param("q").Len())
	g := newTanhGen(s)
	additiveRows := additiveRowsAVX2
	if s.evex {
		additiveRows = additiveRowsAVX512
	}

	var vtail Mem // AVX2: v's last full vector with the lanes before the tail zeroed
	var t tail    // AVX-512: the tail's opmask
	rem := asm.GP64()
	asm.MOVQ(cols, rem)
	asm.ANDQ(U32(s.lanes-1), rem)
	if s.evex {
		t = s.tailMask(rem)
	} else {
		asm.CMPQ(cols, U32(s.lanes))
		asm.JB(LabelRef("shortRows"))
		vtail = asm.AllocLocal(s.bytes())
		asm.TESTQ(rem, rem)
		asm.JZ(LabelRef("rowBlock"))
		m := s.tailMask(rem)
		vt := s.vec()
		asm.VANDPS(Mem{Base: v, Index: cols, Scale: 4, Disp: -s.bytes()}, m.y, vt)
		asm.VMOVUPS(vt, vtail)
	}

	// Blocks of additiveRows rows.
	asm.Label("rowBlock")
	asm.CMPQ(rows, U32(additiveRows))
	asm.JB(LabelRef("rowSingle"))
	{
		r := make([]GPVirtual, additiveRows)
		r[0] = a
		for i := 1; i < additiveRows; i++ {
			r[i] = asm.GP64()
			asm.LEAQ(Mem{Base: r[i-1], Index: ldk, Scale: 1}, r[i])
		}
		acc := make([]VecVirtual, additiveRows)
		for i := range acc {
			acc[i] = s.vec()
			s.zero(acc[i])
		}
		additiveColumns(s, g, "block", r, acc, q, v, cols, rem, t, vtail)
		for i := 0; i < additiveRows; {
			if i+4 <= additiveRows {
				asm.VMOVUPS(s.hsum4(acc[i], acc[i+1], acc[i+2], acc[i+3]), Mem{Base: dst, Disp: 4 * i})
				i += 4
			} else {
				asm.VMOVSS(s.hsum(acc[i]), Mem{Base: dst, Disp: 4 * i})
				i++
			}
		}
		asm.ADDQ(U32(4*additiveRows), dst)
		asm.LEAQ(Mem{Base: r[additiveRows-1], Index: ldk, Scale: 1}, a)
		asm.SUBQ(U32(additiveRows), rows)
		asm.JMP(LabelRef("rowBlock"))
	}

	// The remaining rows one at a time.
	asm.Label("rowSingle")
	asm.TESTQ(rows, rows)
	asm.JZ(LabelRef("done"))
	{
		acc := s.vec()
		s.zero(acc)
		additiveColumns(s, g, "single", []GPVirtual{a}, []VecVirtual{acc}, q, v, cols, rem, t, vtail)
		asm.VMOVSS(s.hsum(acc), Mem{Base: dst})
		asm.ADDQ(U32(4), dst)
		asm.ADDQ(ldk, a)
		asm.DECQ(rows)
		asm.JMP(LabelRef("rowSingle"))
	}

	asm.Label("done")
	asm.VZEROUPPER()
	asm.RET()

	if !s.evex {
		asm.Label("shortRows")
		additiveShort(s, g, dst, rows, a, ldk, q, v, cols)
	}
}

// additiveColumns emits acc[j] += v·tanh(q + row j) over the cols columns of
// the rows at r, with labels prefixed by name.
func additiveColumns(s *isa, g *tanhGen, name string, r []GPVirtual, acc []VecVirtual, q, v, cols, rem GPVirtual, t tail, vtail Mem) {
	n, off := asm.GP64(), asm.GP64()
	asm.MOVQ(cols, n)
	asm.XORQ(off, off) // byte offset into q, v and the rows

	asm.Label(name + "Vector")
	asm.CMPQ(n, U32(s.lanes))
	asm.JB(LabelRef(name + "Tail"))
	{
		qv, vv := s.vec(), s.vec()
		asm.VMOVUPS(Mem{Base: q, Index: off, Scale: 1}, qv)
		asm.VMOVUPS(Mem{Base: v, Index: off, Scale: 1}, vv)
		additiveTanhRows(s, g, len(r), func(i int, x VecVirtual) {
			asm.VADDPS(Mem{Base: r[i], Index: off, Scale: 1}, qv, x)
		}, func(i int, y VecVirtual) { asm.VFMADD231PS(y, vv, acc[i]) })
		asm.ADDQ(U32(s.bytes()), off)
		asm.SUBQ(U32(s.lanes), n)
		asm.JMP(LabelRef(name + "Vector"))
	}

	asm.Label(name + "Tail")
	asm.TESTQ(rem, rem)
	asm.JZ(LabelRef(name + "Done"))
	qv, vv := s.vec(), s.vec()
	if s.evex {
		asm.VMOVUPS_Z(Mem{Base: q, Index: off, Scale: 1}, t.k, qv)
		asm.VMOVUPS_Z(Mem{Base: v, Index: off, Scale: 1}, t.k, vv)
		additiveTanhRows(s, g, len(r), func(i int, x VecVirtual) {
			asm.VMOVUPS_Z(Mem{Base: r[i], Index: off, Scale: 1}, t.k, x)
			asm.VADDPS(qv, x, x)
		}, func(i int, y VecVirtual) { asm.VFMADD231PS(y, vv, acc[i]) })
	} else {
		last := Mem{Base: q, Index: cols, Scale: 4, Disp: -s.bytes()}
		asm.VMOVUPS(last, qv)
		asm.VMOVUPS(vtail, vv)
		additiveTanhRows(s, g, len(r), func(i int, x VecVirtual) {
			m := last
			m.Base = r[i]
			asm.VADDPS(m, qv, x)
		}, func(i int, y VecVirtual) { asm.VFMADD231PS(y, vv, acc[i]) })
	}
	asm.Label(name + "Done")
}

// additiveTanhGroupAVX2 and additiveTanhGroupAVX512 are how many rows' tanh
// chains are interleaved instruction by instruction (tanhGen.applyN): as many
// as the registers hold beside the accumulators, q and v.
var additiveTanhGroupAVX2, additiveTanhGroupAVX512 = 2, 3

// additiveTanhRows emits, for the rows i < rows in groups, x_i = load(i, x_i),
// then tanh of the group's x interleaved, then use(i, tanh(x_i)).
func additiveTanhRows(s *isa, g *tanhGen, rows int, load func(i int, x VecVirtual), use func(i int, y VecVirtual)) {
	group := additiveTanhGroupAVX2
	if s.evex {
		group = additiveTanhGroupAVX512
	}
	for i0 := 0; i0 < rows; i0 += group {
		xs := make([]VecVirtual, 0, group)
		for i := i0; i < min(i0+group, rows); i++ {
			x := s.vec()
			load(i, x)
			xs = append(xs, x)
		}
		for j, y := range g.applyN(xs...) {
			use(i0+j, y)
		}
	}
}

// additiveShort emits the AVX2 path for rows shorter than a vector: q, v and
// each row are copied into zero-padded local vectors (tanh(0)·0 adds 0).
func additiveShort(s *isa, g *tanhGen, dst, rows, a, ldk, q, v, cols GPVirtual) {
	qbuf, vbuf, kbuf := asm.AllocLocal(s.bytes()), asm.AllocLocal(s.bytes()), asm.AllocLocal(s.bytes())
	z := s.vec()
	s.zero(z)
	asm.VMOVUPS(z, qbuf)
	asm.VMOVUPS(z, vbuf)
	qb, vb, kb := asm.GP64(), asm.GP64(), asm.GP64()
	asm.LEAQ(qbuf, qb)
	asm.LEAQ(vbuf, vb)
	asm.LEAQ(kbuf, kb)
	i, e := asm.GP64(), asm.XMM()
	asm.XORQ(i, i)
	asm.Label("shortCopy")
	asm.VMOVSS(Mem{Base: q, Index: i, Scale: 4}, e)
	asm.VMOVSS(e, Mem{Base: qb, Index: i, Scale: 4})
	asm.VMOVSS(Mem{Base: v, Index: i, Scale: 4}, e)
	asm.VMOVSS(e, Mem{Base: vb, Index: i, Scale: 4})
	asm.INCQ(i)
	asm.CMPQ(i, cols)
	asm.JB(LabelRef("shortCopy"))

	asm.Label("shortRow")
	asm.TESTQ(rows, rows)
	asm.JZ(LabelRef("shortDone"))
	asm.VMOVUPS(z, kbuf)
	asm.XORQ(i, i)
	asm.Label("shortRowCopy")
	asm.VMOVSS(Mem{Base: a, Index: i, Scale: 4}, e)
	asm.VMOVSS(e, Mem{Base: kb, Index: i, Scale: 4})
	asm.INCQ(i)
	asm.CMPQ(i, cols)
	asm.JB(LabelRef("shortRowCopy"))
	x := s.vec()
	asm.VMOVUPS(kbuf, x)
	asm.VADDPS(qbuf, x, x)
	th := g.apply(x)
	asm.VMULPS(vbuf, th, th)
	asm.VMOVSS(s.hsum(th), Mem{Base: dst})
	asm.ADDQ(U32(4), dst)
	asm.ADDQ(ldk, a)
	asm.DECQ(rows)
	asm.JMP(LabelRef("shortRow"))

	asm.Label("shortDone")
	asm.VZEROUPPER()
	asm.RET()
}
