package main

import (
	"github.com/heedml/heed/internal/coef"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// tanhGen emits a lane-wise tanh for ISA s; its constants are declared by
// newTanhGen and optionally loaded into registers by keep (call both before
// the loop), so apply can sit in a loop body.
//
// The algorithm (the same as fallback.Tanh), on a = |x| with the sign of x put
// back at the end: a + a³·P(a²) (internal/coef) for a < TanhSmall, else
// 1 − 2/(e²ᵃ+1) with a clamped to TanhSat, where it is exactly 1. e²ᵃ reduces
// 2a by ln2 alone and uses the degree-5 polynomial TExp, whose error the
// formula damps. NaN takes the polynomial branch and stays NaN; ±0 keep their
// sign.
type tanhGen struct {
	s        *isa
	abs      vconst
	small    vconst // TanhSmall
	sat      vconst // TanhSat
	one, two vconst
	p        []vconst // Tanh1..Tanh5
	log2e2   vconst   // 2·log₂e
	shifter  vconst
	ln2half  vconst   // ln2/2
	c        []vconst // 1, 2^k·TExp_k
}

// newTanhGen declares the constants of tanh for s (as RODATA, see newExpGen).
func newTanhGen(s *isa) *tanhGen {
	t := &tanhGen{s: s}
	t.abs = newConstBits(s, 0x7fffffff)
	t.small, t.sat = newConst(s, coef.TanhSmall), newConst(s, coef.TanhSat)
	t.one, t.two = newConst(s, 1), newConst(s, 2)
	for _, c := range []float32{coef.Tanh1, coef.Tanh2, coef.Tanh3, coef.Tanh4, coef.Tanh5} {
		t.p = append(t.p, newConst(s, c))
	}
	t.log2e2, t.ln2half = newConst(s, 2*coef.Log2e), newConst(s, coef.Ln2/2)
	t.shifter = newConst(s, coef.Shifter)
	// Polynomial in r' = r/2: c_k·2^k, exact.
	for _, c := range []float32{1, 2 * coef.TExp1, 4 * coef.TExp2, 8 * coef.TExp3, 16 * coef.TExp4, 32 * coef.TExp5} {
		t.c = append(t.c, newConst(s, c))
	}
	return t
}

// keep makes the n most used constants of the AVX2 apply resident in
// registers (for loops with registers to spare). AVX-512 keeps its embedded
// broadcasts: resident registers measured no faster there.
func (t *tanhGen) keep(n int) {
	if t.s.wide {
		return
	}
	cs := []*vconst{&t.one, &t.shifter, &t.c[0]}
	for i := range t.c[1:] {
		cs = append(cs, &t.c[len(t.c)-1-i])
	}
	for i := range t.p {
		cs = append(cs, &t.p[len(t.p)-1-i])
	}
	cs = append(cs, &t.log2e2, &t.ln2half, &t.two, &t.abs, &t.small, &t.sat)
	keep(cs[:min(n, len(cs))]...)
}

// apply emits dst = tanh(x) lane-wise with the full special-value semantics;
// x is not modified.
func (t *tanhGen) apply(x VecVirtual) VecVirtual {
	s := t.s
	a := s.vec()
	t.abs.and(x, a)

	// Small: a + a·u·P(u), u = a².
	u := s.vec()
	VMULPS(a, a, u)
	q := horner(s, t.p, u)
	VMULPS(a, u, u)
	VFMADD213PS(a, u, q) // q = a³·P + a

	// Large: 1 − 2/(e²ᵃ+1), a clamped to TanhSat (NaN becomes TanhSat here,
	// but NaN lanes take the polynomial).
	ac := s.vec()
	if s.wide {
		t.sat.min(a, ac)
	} else {
		// The same as VMINPS (a ≥ +0 orders as int32, NaN above +Inf), but
		// on any vector ALU port rather than the FP ones.
		VPMINSD(t.sat.op(), a, ac)
	}
	n := s.vec()
	var e VecVirtual
	if s.wide {
		t.log2e2.mul(ac, n)
		VRNDSCALEPS(U8(8), n, n)
		r := ac                   // ac is dead after this
		t.ln2half.fnmadd231(n, r) // r' = a − n·ln2/2
		e = horner(s, t.c, r)
		VSCALEFPS(n, e, e)
	} else {
		tt := t.log2e2.reg()
		t.shifter.fma213(ac, tt) // n = round(2a·log₂e) in the low bits
		t.shifter.sub(tt, n)
		r := ac
		t.ln2half.fnmadd231(n, r)
		e = horner(s, t.c, r)
		VPSLLD(U8(23), tt, tt)
		VPADDD(tt, e, e)
	}
	t.one.add(e, e)
	d, y := s.vec(), s.vec()
	if t.two.r != nil {
		VDIVPS(e, t.two.r, d) // d = 2/(e²ᵃ+1)
	} else {
		d = t.two.reg()
		VDIVPS(e, d, d)
	}
	if t.one.r != nil {
		VSUBPS(d, t.one.r, y) // y = 1 − d
	} else {
		y = t.one.reg()
		VSUBPS(d, y, y)
	}

	// Small lanes (and NaN): the polynomial.
	if s.wide {
		k := K()
		t.small.cmp(cmpNGEUQ, a, k)
		VMOVAPS(q, k, y)
		// y | (x ^ a): x's sign bit on y.
		VPTERNLOGD(U8(0xf6), a, x, y)
		return y
	}
	m := s.vec()
	t.small.cmp(cmpNGEUQ, a, m)
	VBLENDVPS(m, q, y, y)
	VXORPS(a, x, a) // x's sign bit
	VORPS(a, y, y)
	return y
}
