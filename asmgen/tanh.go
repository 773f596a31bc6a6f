package main

import (
	"github.com/heedml/heed/internal/coef"

	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// tanhGen emits a lane-wise tanh for ISA s; its constants are declared by
// newTanhGen and optionally loaded into registers by keep (call both before
// the loop), so apply can sit in a loop body.
//
// The algorithm (the same as fallback.Tanh, operation for operation): on
// a = |x| clamped to TanhSat, tanh(a) = E/(E+2) with E = expm1(2a) =
// 2ⁿ⁺¹·h + (2ⁿ − 1), n = round(2a·log₂e) by TanhShifter, r = a − n·ln2/2 and
// h = expm1(2r)/2 by the polynomial TanhE (relative to expm1, so small a
// need no branch of their own); 2ⁿ⁺¹ is the rounding's bits shifted left by
// 23. The sign of x is put back at the end. NaN propagates through the
// arithmetic (the clamp keeps it); ±0 keep their sign. 18 vector operations
// on AVX2 (one a division), 17 on AVX-512.
type tanhGen struct {
	s       *isa
	abs     vconst
	sat     vconst   // TanhSat
	log2e2  vconst   // 2·log₂e
	shifter vconst   // TanhShifter
	ln2half vconst   // ln2/2
	c       []vconst // 1, TanhE1..TanhE4
	half    vconst
	two     vconst
}

// newTanhGen declares the constants of tanh for s (as RODATA, see newExpGen).
func newTanhGen(s *isa) *tanhGen {
	t := &tanhGen{s: s}
	t.abs = newConstBits(s, 0x7fffffff)
	t.sat = newConst(s, coef.TanhSat)
	t.log2e2, t.ln2half = newConst(s, 2*coef.Log2e), newConst(s, coef.Ln2/2)
	t.shifter = newConst(s, coef.TanhShifter)
	for _, c := range []float32{1, coef.TanhE1, coef.TanhE2, coef.TanhE3, coef.TanhE4} {
		t.c = append(t.c, newConst(s, c))
	}
	t.half, t.two = newConst(s, 0.5), newConst(s, 2)
	return t
}

// keep makes the first n constants of the list below resident in registers
// for AVX2 (for loops with registers to spare): the shifter and 1 are used
// twice a vector, and a resident TanhSat saves its load before VMINPS, which
// needs it in a register. AVX-512 keeps its embedded broadcasts (DESIGN.md).
// The constants apply loads into a
// register it then overwrites (2·log₂e, ½ and TanhE4) come last: a register
// copy saves no more than the load.
func (t *tanhGen) keep(n int) {
	if t.s.evex {
		return
	}
	cs := []*vconst{&t.shifter, &t.c[0], &t.sat, &t.ln2half, &t.c[1], &t.c[2], &t.c[3], &t.two, &t.abs,
		&t.log2e2, &t.half, &t.c[4]}
	keep(cs[:min(n, len(cs))]...)
}

// apply emits dst = tanh(x) lane-wise with the full special-value semantics;
// x is not modified.
func (t *tanhGen) apply(x VecVirtual) VecVirtual { return t.applyN(x)[0] }

// applyN is apply for several vectors, their instructions interleaved step by
// step: the chain of one vector is long (a division at its end), and issued
// one vector after the other the chains fill the scheduler before the next
// vector's first instructions enter it.
func (t *tanhGen) applyN(xs ...VecVirtual) []VecVirtual {
	s := t.s
	each := func(f func(j int)) {
		for j := range xs {
			f(j)
		}
	}
	vecs := func() []VecVirtual {
		v := make([]VecVirtual, len(xs))
		for j := range v {
			v[j] = s.vec()
		}
		return v
	}
	a, ac, sign := vecs(), make([]VecVirtual, len(xs)), make([]VecVirtual, len(xs))
	each(func(j int) { t.abs.and(xs[j], a[j]) })
	// ac = min(a, TanhSat), NaN kept: VMINPS returns its second source (Go's
	// first operand) when either is NaN.
	each(func(j int) {
		if t.sat.r != nil {
			ac[j] = s.vec()
			asm.VMINPS(a[j], t.sat.r, ac[j])
		} else {
			ac[j] = t.sat.reg()
			asm.VMINPS(a[j], ac[j], ac[j])
		}
	})
	if !s.evex {
		each(func(j int) { sign[j] = a[j]; asm.VXORPS(a[j], xs[j], sign[j]) }) // x's sign bit; a is dead
	}

	tt, n := make([]VecVirtual, len(xs)), vecs()
	each(func(j int) { tt[j] = t.log2e2.reg() })
	each(func(j int) { t.shifter.fma213(ac[j], tt[j]) }) // n + 128 in the low bits
	each(func(j int) { t.shifter.sub(tt[j], n[j]) })
	r := ac
	each(func(j int) { t.ln2half.fnmadd231(n[j], r[j]) }) // r = a − n·ln2/2
	q := make([]VecVirtual, len(xs))
	each(func(j int) { q[j] = t.c[4].reg() })
	for k := 3; k >= 0; k-- { // q = 1 + r·(E1 + … + r·E4)
		each(func(j int) { t.c[k].fma213(r[j], q[j]) })
	}
	r2 := n
	each(func(j int) { asm.VMULPS(r[j], r[j], r2[j]) })
	each(func(j int) { asm.VFMADD213PS(r[j], r2[j], q[j]) }) // h = r²·q + r = expm1(2r)/2
	h := q

	p := tt
	each(func(j int) { asm.VPSLLD(U8(23), p[j], p[j]) }) // 2ⁿ⁺¹
	e := make([]VecVirtual, len(xs))
	each(func(j int) { e[j] = t.half.reg() })
	each(func(j int) { t.c[0].fmsub213(p[j], e[j]) })       // 2ⁿ − 1 = 2ⁿ⁺¹·½ − 1
	each(func(j int) { asm.VFMADD231PS(p[j], h[j], e[j]) }) // E = 2ⁿ⁺¹·h + 2ⁿ − 1
	d := vecs()
	each(func(j int) { t.two.add(e[j], d[j]) })
	each(func(j int) { asm.VDIVPS(d[j], e[j], e[j]) }) // E/(E+2)

	if s.evex {
		// e | (x ^ a): x's sign bit on the result.
		each(func(j int) { asm.VPTERNLOGD(U8(0xf6), a[j], xs[j], e[j]) })
	} else {
		each(func(j int) { asm.VORPS(sign[j], e[j], e[j]) })
	}
	return e
}
