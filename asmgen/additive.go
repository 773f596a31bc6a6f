package main

import (
	. "github.com/mmcloughlin/avo/build"
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
// kernel: 2 to 6 rows measured within 2% of each other on Zen 4.
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
	Doc(name+" sets dst[s] = Σ v[i]·tanh(q[i] + K[s,i]) for the len(dst)×len(q)",
		"matrix K with row stride ldk; len(q) ≥ 1, len(v) ≥ len(q).")
	dst := load(Param("dst").Base())
	rows := load(Param("dst").Len())
	a := load(Param("k").Base())
	ldk := load(Param("ldk"))
	SHLQ(U8(2), ldk) // row stride in bytes
	q := load(Param("q").Base())
	v := load(Param("v").Base())
	cols := load(Param("q").Len())
	g := newTanhGen(s)
	additiveRows := additiveRowsAVX2
	if s.wide {
		additiveRows = additiveRowsAVX512
	}

	var vtail Mem // AVX2: v's last full vector with the lanes before the tail zeroed
	var t tail    // AVX-512: the tail's opmask
	rem := GP64()
	MOVQ(cols, rem)
	ANDQ(U32(s.lanes-1), rem)
	if s.wide {
		t = s.tailMask(rem)
	} else {
		CMPQ(cols, U32(s.lanes))
		JB(LabelRef("shortRows"))
		vtail = AllocLocal(s.bytes())
		TESTQ(rem, rem)
		JZ(LabelRef("rowBlock"))
		m := s.tailMask(rem)
		vt := s.vec()
		VANDPS(Mem{Base: v, Index: cols, Scale: 4, Disp: -s.bytes()}, m.y, vt)
		VMOVUPS(vt, vtail)
	}

	// Blocks of additiveRows rows.
	Label("rowBlock")
	CMPQ(rows, U32(additiveRows))
	JB(LabelRef("rowSingle"))
	{
		r := make([]GPVirtual, additiveRows)
		r[0] = a
		for i := 1; i < additiveRows; i++ {
			r[i] = GP64()
			LEAQ(Mem{Base: r[i-1], Index: ldk, Scale: 1}, r[i])
		}
		acc := make([]VecVirtual, additiveRows)
		for i := range acc {
			acc[i] = s.vec()
			s.zero(acc[i])
		}
		additiveColumns(s, g, "block", r, acc, q, v, cols, rem, t, vtail)
		for i := 0; i < additiveRows; {
			if i+4 <= additiveRows {
				VMOVUPS(s.hsum4(acc[i], acc[i+1], acc[i+2], acc[i+3]), Mem{Base: dst, Disp: 4 * i})
				i += 4
			} else {
				VMOVSS(s.hsum(acc[i]), Mem{Base: dst, Disp: 4 * i})
				i++
			}
		}
		ADDQ(U32(4*additiveRows), dst)
		LEAQ(Mem{Base: r[additiveRows-1], Index: ldk, Scale: 1}, a)
		SUBQ(U32(additiveRows), rows)
		JMP(LabelRef("rowBlock"))
	}

	// The remaining rows one at a time.
	Label("rowSingle")
	TESTQ(rows, rows)
	JZ(LabelRef("done"))
	{
		acc := s.vec()
		s.zero(acc)
		additiveColumns(s, g, "single", []GPVirtual{a}, []VecVirtual{acc}, q, v, cols, rem, t, vtail)
		VMOVSS(s.hsum(acc), Mem{Base: dst})
		ADDQ(U32(4), dst)
		ADDQ(ldk, a)
		DECQ(rows)
		JMP(LabelRef("rowSingle"))
	}

	Label("done")
	VZEROUPPER()
	RET()

	if !s.wide {
		additiveShort(s, g, dst, rows, a, ldk, q, v, cols)
	}
}

// additiveColumns emits acc[j] += v·tanh(q + row j) over the cols columns of
// the rows at r, with labels prefixed by name.
func additiveColumns(s *isa, g *tanhGen, name string, r []GPVirtual, acc []VecVirtual, q, v, cols, rem GPVirtual, t tail, vtail Mem) {
	n, off := GP64(), GP64()
	MOVQ(cols, n)
	XORQ(off, off) // byte offset into q, v and the rows

	Label(name + "Vector")
	CMPQ(n, U32(s.lanes))
	JB(LabelRef(name + "Tail"))
	{
		qv, vv := s.vec(), s.vec()
		VMOVUPS(Mem{Base: q, Index: off, Scale: 1}, qv)
		VMOVUPS(Mem{Base: v, Index: off, Scale: 1}, vv)
		additiveTanhRows(s, g, len(r), func(i int, x VecVirtual) {
			VADDPS(Mem{Base: r[i], Index: off, Scale: 1}, qv, x)
		}, func(i int, y VecVirtual) { VFMADD231PS(y, vv, acc[i]) })
		ADDQ(U32(s.bytes()), off)
		SUBQ(U32(s.lanes), n)
		JMP(LabelRef(name + "Vector"))
	}

	Label(name + "Tail")
	TESTQ(rem, rem)
	JZ(LabelRef(name + "Done"))
	qv, vv := s.vec(), s.vec()
	if s.wide {
		VMOVUPS_Z(Mem{Base: q, Index: off, Scale: 1}, t.k, qv)
		VMOVUPS_Z(Mem{Base: v, Index: off, Scale: 1}, t.k, vv)
		additiveTanhRows(s, g, len(r), func(i int, x VecVirtual) {
			VMOVUPS_Z(Mem{Base: r[i], Index: off, Scale: 1}, t.k, x)
			VADDPS(qv, x, x)
		}, func(i int, y VecVirtual) { VFMADD231PS(y, vv, acc[i]) })
	} else {
		last := Mem{Base: q, Index: cols, Scale: 4, Disp: -s.bytes()}
		VMOVUPS(last, qv)
		VMOVUPS(vtail, vv)
		additiveTanhRows(s, g, len(r), func(i int, x VecVirtual) {
			m := last
			m.Base = r[i]
			VADDPS(m, qv, x)
		}, func(i int, y VecVirtual) { VFMADD231PS(y, vv, acc[i]) })
	}
	Label(name + "Done")
}

// additiveTanhGroupAVX2 and additiveTanhGroupAVX512 are how many rows' tanh
// chains are interleaved instruction by instruction (tanhGen.applyN): as many
// as the registers hold beside the accumulators, q and v.
var additiveTanhGroupAVX2, additiveTanhGroupAVX512 = 2, 3

// additiveTanhRows emits, for the rows i < rows in groups, x_i = load(i, x_i),
// then tanh of the group's x interleaved, then use(i, tanh(x_i)).
func additiveTanhRows(s *isa, g *tanhGen, rows int, load func(i int, x VecVirtual), use func(i int, y VecVirtual)) {
	group := additiveTanhGroupAVX2
	if s.wide {
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
	Label("shortRows")
	qbuf, vbuf, kbuf := AllocLocal(s.bytes()), AllocLocal(s.bytes()), AllocLocal(s.bytes())
	z := s.vec()
	s.zero(z)
	VMOVUPS(z, qbuf)
	VMOVUPS(z, vbuf)
	qb, vb, kb := GP64(), GP64(), GP64()
	LEAQ(qbuf, qb)
	LEAQ(vbuf, vb)
	LEAQ(kbuf, kb)
	i, e := GP64(), XMM()
	XORQ(i, i)
	Label("shortCopy")
	VMOVSS(Mem{Base: q, Index: i, Scale: 4}, e)
	VMOVSS(e, Mem{Base: qb, Index: i, Scale: 4})
	VMOVSS(Mem{Base: v, Index: i, Scale: 4}, e)
	VMOVSS(e, Mem{Base: vb, Index: i, Scale: 4})
	INCQ(i)
	CMPQ(i, cols)
	JB(LabelRef("shortCopy"))

	Label("shortRow")
	TESTQ(rows, rows)
	JZ(LabelRef("shortDone"))
	VMOVUPS(z, kbuf)
	XORQ(i, i)
	Label("shortRowCopy")
	VMOVSS(Mem{Base: a, Index: i, Scale: 4}, e)
	VMOVSS(e, Mem{Base: kb, Index: i, Scale: 4})
	INCQ(i)
	CMPQ(i, cols)
	JB(LabelRef("shortRowCopy"))
	x := s.vec()
	VMOVUPS(kbuf, x)
	VADDPS(qbuf, x, x)
	th := g.apply(x)
	VMULPS(vbuf, th, th)
	VMOVSS(s.hsum(th), Mem{Base: dst})
	ADDQ(U32(4), dst)
	ADDQ(ldk, a)
	DECQ(rows)
	JMP(LabelRef("shortRow"))

	Label("shortDone")
	VZEROUPPER()
	RET()
}
