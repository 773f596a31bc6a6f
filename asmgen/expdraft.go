package main

// TEMPORARY stand-in for h-exp's expGen/tanhGen (same interface), used until
// that branch lands; deleted by the merge.

import (
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

var draftConsts = map[string]Mem{}

func draftConst(name string, v float32) Mem {
	if m, ok := draftConsts[name]; ok {
		return m
	}
	m := GLOBL("draft"+name, RODATA|NOPTR)
	for i := 0; i < 16; i++ {
		DATA(4*i, U32(math.Float32bits(v)))
	}
	draftConsts[name] = m
	return m
}

type expGen struct{ s *isa }

func newExpGen(s *isa) *expGen { return &expGen{s} }

func (e *expGen) apply(x VecVirtual) VecVirtual {
	s := e.s
	xc, t, r, p := s.vec(), s.vec(), s.vec(), s.vec()
	VMAXPS(draftConst("lo", -87.33654), x, xc)
	VMINPS(draftConst("hi", 88.0), xc, xc)
	VMULPS(draftConst("log2e", math.Log2E), xc, t)
	if s.wide {
		VRNDSCALEPS(U8(0), t, t)
	} else {
		VROUNDPS(U8(0), t, t)
	}
	VMOVAPS(xc, r)
	VFNMADD231PS(draftConst("ln2hi", 0.693145751953125), t, r)
	VFNMADD231PS(draftConst("ln2lo", 1.428606765330187045e-06), t, r)
	c := []float64{1, 1, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040}
	VMOVUPS(draftConst("c7", float32(c[7])), p)
	for i := 6; i >= 0; i-- {
		VFMADD213PS(draftConst("c"+string(rune('0'+i)), float32(c[i])), r, p)
	}
	VCVTPS2DQ(t, t)
	VPSLLD(U8(23), t, t)
	VPADDD(t, p, p)
	if s.wide {
		k, kn := K(), K()
		VCMPPS(U8(1), draftConst("lo", -87.33654), x, k) // x < lo
		VMOVAPS(draftConst("zero", 0), k, p)
		VCMPPS(U8(3), x, x, kn)
		VMOVAPS(x, kn, p)
	} else {
		m := s.vec()
		VCMPPS(U8(1), draftConst("lo", -87.33654), x, m)
		VANDNPS(p, m, p)
		VCMPPS(U8(3), x, x, m)
		VBLENDVPS(m, x, p, p)
	}
	return p
}

type tanhGen struct{ s *isa }

func newTanhGen(s *isa) *tanhGen { return &tanhGen{s} }

// apply: sign(x)·(1 − 2/(e^{2|x|}+1)), Taylor below 0.25.
func (g *tanhGen) apply(x VecVirtual) VecVirtual {
	s := g.s
	a, e2 := s.vec(), s.vec()
	VANDPS(draftConst("abs", math.Float32frombits(0x7fffffff)), x, a)
	VMINPS(draftConst("ten", 10), a, a)
	VADDPS(a, a, e2)
	ex := newExpGen(s).apply(e2)
	VADDPS(draftConst("one", 1), ex, ex)
	d := s.vec()
	VMOVUPS(draftConst("two", 2), d)
	VDIVPS(ex, d, d)
	big := s.vec()
	VMOVUPS(draftConst("one", 1), big)
	VSUBPS(d, big, big)
	// small
	x2, p := s.vec(), s.vec()
	VMULPS(a, a, x2)
	c := []float64{1, -1.0 / 3, 2.0 / 15, -17.0 / 315, 62.0 / 2835, -1382.0 / 155925}
	VMOVUPS(draftConst("t5", float32(c[5])), p)
	for i := 4; i >= 0; i-- {
		VFMADD213PS(draftConst("t"+string(rune('0'+i)), float32(c[i])), x2, p)
	}
	VMULPS(a, p, p)
	if s.wide {
		k := K()
		VCMPPS(U8(1), draftConst("quarter", 0.25), a, k)
		VMOVAPS(p, k, big)
	} else {
		m := s.vec()
		VCMPPS(U8(1), draftConst("quarter", 0.25), a, m)
		VBLENDVPS(m, p, big, big)
	}
	// sign
	sg := s.vec()
	VANDPS(draftConst("sign", math.Float32frombits(0x80000000)), x, sg)
	VORPS(sg, big, big)
	if s.wide {
		kn := K()
		VCMPPS(U8(3), x, x, kn)
		VMOVAPS(x, kn, big)
	} else {
		m := s.vec()
		VCMPPS(U8(3), x, x, m)
		VBLENDVPS(m, x, big, big)
	}
	return big
}
