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
	}
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
	asm.Label(lbl("single"))
	asm.MOVQ(n, lim)
	asm.ANDQ(I32(-s.lanes), lim)
	asm.Label(lbl("singleLoop"))
	asm.CMPQ(i, lim)
	asm.JAE(LabelRef(lbl("tail")))
	v, k := cmpVec(0)
	found(v, k, 0, "Single")
	asm.ADDQ(U32(s.lanes), i)
	asm.JMP(LabelRef(lbl("singleLoop")))
	asm.Label(lbl("tail"))
	if s.evex {
		rem := asm.GP64()
		asm.MOVQ(n, rem)
		asm.SUBQ(i, rem)
		asm.JZ(LabelRef(lbl("none")))
		t := s.tailMask(rem)
		w, kc := s.vec(), asm.K()
		asm.VMOVUPS_Z(Mem{Base: x, Index: i, Scale: 4}, t.k, w)
		asm.VCMPPS(U8(cmpNLEUQ), tv, w, t.k, kc)
		found(nil, kc, 0, "Tail")
	} else {
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
