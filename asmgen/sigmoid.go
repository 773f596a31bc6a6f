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
			return func(xs ...VecVirtual) []VecVirtual {
				var ys []VecVirtual
				for _, x := range xs {
					ys = append(ys, g.apply(x))
				}
				return ys
			}
		})
	}
}

// sigmoidGen emits a lane-wise logistic function for ISA s, the algorithm of
// fallback.Sigmoid operation for operation (so every ISA gives its bits): on
// t = −x clamped to [−SigmoidClamp, SigmoidTHi] (NaN kept), Exp's reduction
// n = round(t·log₂e), r = t − n·ln2 and polynomial q (eʳ = 1 + r·q), then
// σ = A / ((1 + A·w) + w·(r·q)) with A = min(1, 2⁻ⁿ) and w = min(1, 2ⁿ) built
// from the rounding's bits, and +0 where x < SigmoidLo. 23 vector operations
// per vector on AVX2, one a division.
type sigmoidGen struct {
	s                                          *isa
	sign, thi, nclamp, log2e, shifter, lo, one vconst
	ln2hi, ln2lo                               vconst
	q                                          []vconst // Exp1..Exp6
}

func newSigmoidGen(s *isa) *sigmoidGen {
	g := &sigmoidGen{s: s}
	g.sign = newConstBits(s, 0x80000000)
	g.thi, g.nclamp = newConst(s, coef.SigmoidTHi), newConst(s, -coef.SigmoidClamp)
	g.log2e, g.shifter = newConst(s, coef.Log2e), newConst(s, coef.Shifter)
	g.ln2hi, g.ln2lo = newConst(s, coef.Ln2Hi), newConst(s, coef.Ln2Lo)
	g.lo, g.one = newConst(s, coef.SigmoidLo), newConst(s, 1)
	for _, c := range []float32{coef.Exp1, coef.Exp2, coef.Exp3, coef.Exp4, coef.Exp5, coef.Exp6} {
		g.q = append(g.q, newConst(s, c))
	}
	return g
}

// apply emits σ(x) lane-wise; x is not modified.
func (g *sigmoidGen) apply(x VecVirtual) VecVirtual {
	s := g.s
	t := g.sign.reg()
	asm.VXORPS(x, t, t) // −x
	// min then max, each returning Go's first operand (t) when it is NaN.
	c := g.thi.reg()
	asm.VMINPS(t, c, t)
	c = g.nclamp.reg()
	asm.VMAXPS(t, c, t)
	e := g.log2e.reg()
	g.shifter.fma213(t, e) // n in the low bits
	n := s.vec()
	g.shifter.sub(e, n)
	g.ln2hi.fnmadd231(n, t) // r = t − n·ln2 (Cody–Waite)
	g.ln2lo.fnmadd231(n, t)
	r := t
	q := horner(s, g.q, r)
	asm.VMULPS(q, r, q) // r·q
	asm.VPSLLD(U8(23), e, e)
	one := g.one.reg()
	a, w := s.vec(), s.vec()
	asm.VPSUBD(e, one, a) // 2⁻ⁿ
	asm.VPADDD(e, one, w) // 2ⁿ
	asm.VMINPS(a, one, a) // min(1, ·), NaN kept
	asm.VMINPS(w, one, w)
	d := n
	asm.VMULPS(a, w, d)
	asm.VADDPS(one, d, d)    // 1 + A·w
	asm.VFMADD231PS(w, q, d) // + w·(r·q)
	asm.VDIVPS(d, a, a)      // A / d
	if s.evex {
		k := asm.K()
		g.lo.cmp(cmpNLTUQ, x, k) // x ≥ SigmoidLo or NaN
		asm.VMOVAPS_Z(a, k, a)
		return a
	}
	m := s.vec()
	g.lo.cmp(cmpLTOQ, x, m)
	asm.VANDNPS(a, m, a)
	return a
}
