package main

import (
	"github.com/heedml/heed/internal/coef"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// tanhGen emits a lane-wise tanh for ISA s; its constants are materialised
// once by newTanhGen (call it before the loop), so apply can sit in a loop body.
//
// The algorithm (the same as fallback.Tanh), on a = |x| with the sign of x put
// back at the end: a + a³·P(a²) (internal/coef) for a < TanhSmall,
// 1 − 2/(e²ᵃ+1) with exp's reduction and polynomial for a < TanhSat, 1 beyond.
// ±0 keep their sign, NaN stays NaN.
type tanhGen struct {
	s               *isa
	e               *expGen
	abs, small, sat vconst
	one, two        vconst
	t               []vconst
}

// newTanhGen materialises the constants of tanh for s.
func newTanhGen(s *isa) *tanhGen {
	t := &tanhGen{s: s, e: newExpGen(s)}
	t.abs = newConstBits(s, 0x7fffffff)
	t.small, t.sat = newConst(s, coef.TanhSmall), newConst(s, coef.TanhSat)
	t.one, t.two = newConst(s, 1), newConst(s, 2)
	for _, c := range []float32{coef.Tanh1, coef.Tanh2, coef.Tanh3, coef.Tanh4, coef.Tanh5, coef.Tanh6} {
		t.t = append(t.t, newConst(s, c))
	}
	return t
}

// apply emits dst = tanh(x) lane-wise with the full special-value semantics;
// x is not modified.
func (t *tanhGen) apply(x VecVirtual) VecVirtual {
	s, e := t.s, t.e
	a := s.vec()
	VANDPS(t.abs.op(), x, a)

	// Small: y = a + a·u·P(u), u = a².
	u := s.vec()
	VMULPS(a, a, u)
	q := s.vec()
	last := len(t.t) - 1
	if s.wide {
		VMOVAPS(t.t[last].r, q)
	} else {
		VMOVUPS(t.t[last].mem, q)
	}
	for k := last - 1; k >= 0; k-- {
		VFMADD213PS(t.t[k].op(), u, q)
	}
	VMULPS(a, u, u)
	VFMADD213PS(a, u, q) // q = a³·P + a

	// Large: 1 − 2/(e^{2a}+1); lanes beyond the range are replaced below, so
	// the scaling skips exp's special cases.
	a2 := s.vec()
	VADDPS(a, a, a2)
	n := s.vec()
	var p VecVirtual
	if s.wide {
		VMULPS(e.log2e.r, a2, n)
		VRNDSCALEPS(U8(8), n, n)
		p = e.poly(e.reduce(a2, n))
		VSCALEFPS(n, p, p)
	} else {
		tt := s.vec()
		VMOVUPS(e.log2e.mem, tt)
		VFMADD213PS(e.shifter.mem, a2, tt)
		VSUBPS(e.shifter.mem, tt, n)
		p = e.poly(e.reduce(a2, n))
		VPSLLD(U8(23), tt, tt)
		VPADDD(tt, p, p)
	}
	VADDPS(t.one.op(), p, p)
	d := t.two.reg()
	if s.wide {
		d = s.vec()
		VDIVPS(p, t.two.r, d)
	} else {
		VDIVPS(p, d, d)
	}
	y := t.one.reg()
	if s.wide {
		y = s.vec()
		VSUBPS(d, t.one.r, y)
	} else {
		VSUBPS(d, y, y)
	}

	if s.wide {
		k := K()
		VCMPPS(U8(cmpLTOQ), t.small.r, a, k)
		VMOVAPS(q, k, y)
		VCMPPS(U8(cmpGEOQ), t.sat.r, a, k)
		VMOVAPS(t.one.r, k, y)
	} else {
		m := s.vec()
		VCMPPS(U8(cmpLTOQ), t.small.mem, a, m)
		VBLENDVPS(m, q, y, y)
		VCMPPS(U8(cmpGEOQ), t.sat.mem, a, m)
		VBLENDVPS(m, t.one.mem, y, y)
	}
	// Sign: x ^ |x| is x's sign bit.
	VXORPS(a, x, a)
	VORPS(a, y, y)
	return y
}
