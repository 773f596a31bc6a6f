package main

import (
	"github.com/heedml/heed/internal/coef"

	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func init() { register("sigmoid", genSigmoidFamily) }

func genSigmoidFamily() {
	for _, s := range isas {
		genElementwise(s, "sigmoid", "1/(1+e^−x[i])", func(s *isa) func(...VecVirtual) []VecVirtual {
			g := newSigmoidGen(s)
			g.keep()
			return g.applyN
		})
	}
}

// sigmoidGen emits a lane-wise logistic function for ISA s, the algorithm of
// fallback.Sigmoid (so every ISA gives its bits): on t = −x clamped to
// [−SigmoidClamp, SigmoidTHi] (NaN kept), Exp's reduction n = round(t·log₂e),
// r = t − n·ln2 and polynomial q (eʳ = 1 + r·q), then σ = p / ((p + 1) + r·q)
// with p = 2⁻ⁿ built from the rounding's bits, and +0 where x < SigmoidLo.
// 18 vector operations per vector on AVX2 (one a division), 17 on AVX-512.
type sigmoidGen struct {
	s                   *isa
	shifter, lo, one    vconst
	ln2hi, ln2lo        vconst
	q                   []vconst // Exp1..Exp6
	nthi, clamp, nlog2e vconst   // −SigmoidTHi, SigmoidClamp, −log₂e: applyN clamps x, not −x
}

func newSigmoidGen(s *isa) *sigmoidGen {
	g := &sigmoidGen{s: s}
	g.shifter = newConst(s, coef.Shifter)
	g.ln2hi, g.ln2lo = newConst(s, coef.Ln2Hi), newConst(s, coef.Ln2Lo)
	g.lo, g.one = newConst(s, coef.SigmoidLo), newConst(s, 1)
	g.nthi, g.clamp, g.nlog2e = newConst(s, -coef.SigmoidTHi), newConst(s, coef.SigmoidClamp), newConst(s, -coef.Log2e)
	for _, c := range []float32{coef.Exp1, coef.Exp2, coef.Exp3, coef.Exp4, coef.Exp5, coef.Exp6} {
		g.q = append(g.q, newConst(s, c))
	}
	return g
}

// keep makes resident the constants applyN uses as register operands (the
// clamp bounds, which VMAXPS and VMINPS need in a register to return x's NaN,
// 1, the first source of VPSUBD, the shifter, used twice, and the first
// operands of the two multiply-adds that start a chain), loaded once before
// the loop.
func (g *sigmoidGen) keep() {
	if g.s.evex {
		keep(&g.nthi, &g.clamp, &g.one, &g.shifter, &g.nlog2e, &g.q[5])
		return
	}
	keep(&g.nthi, &g.clamp, &g.one, &g.shifter)
}

// applyN emits σ for several vectors, their instructions interleaved step by
// step (the chain of one vector is long, a division at its end). It gives
// fallback's bits with one operation fewer: it clamps x to
// [−SigmoidTHi, SigmoidClamp] (xc = −t exactly, NaN kept) instead of negating
// x, starts the reduction from xc with −log₂e (the same products), and takes
// r = −n·ln2hi − xc with one negated multiply-subtract (the same exact value,
// rounded once). xs are not modified.
func (g *sigmoidGen) applyN(xs ...VecVirtual) []VecVirtual {
	s := g.s
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
	// xc = min(max(x, −THi), Clamp): VMAXPS and VMINPS return their second
	// source (Go's first operand) when either is NaN.
	xc := vecs()
	each(func(j int) { asm.VMAXPS(xs[j], g.nthi.r, xc[j]) })
	each(func(j int) { asm.VMINPS(xc[j], g.clamp.r, xc[j]) })
	// e = xc·(−log₂e) + shifter: n in the low bits.
	e := make([]VecVirtual, len(xs))
	each(func(j int) { e[j] = g.nlog2e.reg() })
	each(func(j int) { asm.VFMADD213PS(g.shifter.r, xc[j], e[j]) })
	n := vecs()
	each(func(j int) { asm.VSUBPS(g.shifter.r, e[j], n[j]) })
	r := xc
	each(func(j int) { fnmsub231(g.ln2hi, n[j], r[j]) }) // r = −n·ln2hi − xc (Cody–Waite)
	each(func(j int) { g.ln2lo.fnmadd231(n[j], r[j]) })
	q := make([]VecVirtual, len(xs))
	each(func(j int) { q[j] = g.q[5].reg() })
	for k := 4; k >= 0; k-- {
		each(func(j int) { g.q[k].fma213(r[j], q[j]) })
	}
	each(func(j int) { asm.VPSLLD(U8(23), e[j], e[j]) })
	p := e
	each(func(j int) { asm.VPSUBD(e[j], g.one.r, p[j]) }) // 2⁻ⁿ
	d := vecs()
	each(func(j int) { asm.VADDPS(g.one.r, p[j], d[j]) })   // p + 1
	each(func(j int) { asm.VFMADD231PS(q[j], r[j], d[j]) }) // + r·q, rounded once
	if s.evex {
		// p / d, zeroed where x < SigmoidLo (x ≥ SigmoidLo or NaN kept).
		k := make([]Register, len(xs))
		each(func(j int) { k[j] = asm.K(); g.lo.cmp(cmpNLTUQ, xs[j], k[j]) })
		each(func(j int) { asm.VDIVPS_Z(d[j], p[j], k[j], p[j]) })
		return p
	}
	each(func(j int) { asm.VDIVPS(d[j], p[j], p[j]) })
	m := vecs()
	each(func(j int) { g.lo.cmp(cmpLTOQ, xs[j], m[j]) })
	each(func(j int) { asm.VANDNPS(p[j], m[j], p[j]) })
	return p
}

// fnmsub231 emits r = −v·c − r.
func fnmsub231(c vconst, v, r VecVirtual) {
	if c.r != nil {
		asm.VFNMSUB231PS(c.r, v, r)
	} else if c.s.evex {
		asm.VFNMSUB231PS_BCST(c.mem, v, r)
	} else {
		asm.VFNMSUB231PS(c.mem, v, r)
	}
}
