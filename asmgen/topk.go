package main

import (
	. "github.com/mmcloughlin/avo/build"
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
	Doc(name + " returns the smallest i with !(x[i] ≤ t), or len(x).")
	x := load(Param("x").Base())
	n := load(Param("x").Len())
	tv := s.broadcast("t")
	lbl := func(l string) string { return "firstAbove" + l }
	i, lim := GP64(), GP64()
	XORQ(i, i)
	cmpVec := func(disp int) (VecVirtual, OpmaskVirtual) {
		v := s.vec()
		VMOVUPS(Mem{Base: x, Index: i, Scale: 4, Disp: disp}, v)
		if s.wide {
			k := K()
			VCMPPS(U8(cmpNLEUQ), tv, v, k)
			return nil, k
		}
		VCMPPS(U8(cmpNLEUQ), tv, v, v)
		return v, nil
	}
	found := func(v VecVirtual, k OpmaskVirtual, disp int, tag string) {
		b := GP32()
		if s.wide {
			KMOVW(k, b)
		} else {
			VMOVMSKPS(v, b)
		}
		TESTL(b, b)
		skip := lbl("miss") + tag
		JZ(LabelRef(skip))
		TZCNTL(b, b)
		r := GP64()
		MOVL(b, r.As32())
		if disp != 0 {
			ADDQ(U32(disp/4), r)
		}
		ADDQ(i, r)
		Store(r, ReturnIndex(0))
		VZEROUPPER()
		RET()
		Label(skip)
	}
	const unroll = 4
	MOVQ(n, lim)
	ANDQ(I32(-unroll*s.lanes), lim)
	Label(lbl("block"))
	CMPQ(i, lim)
	JAE(LabelRef(lbl("single")))
	vs := make([]VecVirtual, unroll)
	ks := make([]OpmaskVirtual, unroll)
	for j := range vs {
		vs[j], ks[j] = cmpVec(j * s.bytes())
	}
	any := GP32()
	if s.wide {
		ka, kb := K(), K()
		KORW(ks[1], ks[0], ka)
		KORW(ks[3], ks[2], kb)
		KORTESTW(kb, ka)
		JNZ(LabelRef(lbl("locate")))
	} else {
		a, b := s.vec(), s.vec()
		VORPS(vs[1], vs[0], a)
		VORPS(vs[3], vs[2], b)
		VORPS(b, a, a)
		VMOVMSKPS(a, any)
		TESTL(any, any)
		JNZ(LabelRef(lbl("locate")))
	}
	ADDQ(U32(unroll*s.lanes), i)
	JMP(LabelRef(lbl("block")))
	Label(lbl("locate"))
	for j := range vs {
		found(vs[j], ks[j], j*s.bytes(), itoaGen(j))
	}
	Label(lbl("single"))
	MOVQ(n, lim)
	ANDQ(I32(-s.lanes), lim)
	Label(lbl("singleLoop"))
	CMPQ(i, lim)
	JAE(LabelRef(lbl("tail")))
	v, k := cmpVec(0)
	found(v, k, 0, "Single")
	ADDQ(U32(s.lanes), i)
	JMP(LabelRef(lbl("singleLoop")))
	Label(lbl("tail"))
	if s.wide {
		rem := GP64()
		MOVQ(n, rem)
		SUBQ(i, rem)
		JZ(LabelRef(lbl("none")))
		t := s.tailMask(rem)
		w, kc := s.vec(), K()
		VMOVUPS_Z(Mem{Base: x, Index: i, Scale: 4}, t.k, w)
		VCMPPS(U8(cmpNLEUQ), tv, w, t.k, kc)
		found(nil, kc, 0, "Tail")
	} else {
		Label(lbl("scalarLoop"))
		CMPQ(i, n)
		JAE(LabelRef(lbl("none")))
		w := XMM()
		VMOVSS(Mem{Base: x, Index: i, Scale: 4}, w)
		VUCOMISS(tv.AsX(), w)
		JA(LabelRef(lbl("scalarHit")))
		JP(LabelRef(lbl("scalarHit")))
		INCQ(i)
		JMP(LabelRef(lbl("scalarLoop")))
		Label(lbl("scalarHit"))
		Store(i, ReturnIndex(0))
		VZEROUPPER()
		RET()
	}
	Label(lbl("none"))
	Store(n, ReturnIndex(0))
	VZEROUPPER()
	RET()
}

func itoaGen(v int) string {
	if v < 10 {
		return string(rune('0' + v))
	}
	return itoaGen(v/10) + string(rune('0'+v%10))
}
