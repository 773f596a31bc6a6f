package main

import (
	"fmt"

	"github.com/heedml/heed/internal/coef"

	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func init() { register("log", genLogFamily) }

func genLogFamily() {
	for _, s := range isas {
		genElementwise(s, "log", "ln x[i]", func(s *isa) func(...VecVirtual) []VecVirtual {
			return newLogGen(s).applyN
		})
	}
}

// logGen emits a lane-wise natural logarithm for ISA s, the algorithm of
// fallback.Log operation for operation: subnormal lanes scaled by 2²³ (their
// exponent lowered by 23), x = 2ᵉ·m with m ∈ [√½, √2) from the bits, f = m − 1,
// ln x = e·ln2 + f + (f²·(−½ + f·P(f)) + e·Ln2Lo32), then the special
// values blended in: x = ±0 → −Inf, x < 0 → the default NaN, +Inf and NaN
// → x. applyN skips the scaling and the blends, which change nothing there,
// when every lane of its vectors is a positive normal float.
type logGen struct {
	s                                      *isa
	minNormal, scale, m23, sqrtHalf, mant  vconst
	one, mhalf, ln2, ln2lo, inf, nan, ninf vconst
	bias, notNormal                        vconst   // the test of applyN (bits)
	p                                      []vconst // Log0..Log7
	branches                               int      // applyN's labels so far
}

func newLogGen(s *isa) *logGen {
	g := &logGen{s: s}
	g.minNormal, g.scale, g.m23 = newConst(s, 0x1p-126), newConst(s, 0x1p23), newConst(s, -23)
	g.sqrtHalf, g.mant = newConstBits(s, coef.LogSqrtHalf), newConstBits(s, 1<<23-1)
	g.one, g.mhalf = newConst(s, 1), newConst(s, -0.5)
	g.ln2, g.ln2lo = newConst(s, coef.Ln2), newConst(s, coef.Ln2Lo32)
	g.inf, g.nan, g.ninf = newConstBits(s, 0x7f800000), newConstBits(s, 0x7fc00000), newConstBits(s, 0xff800000)
	g.bias, g.notNormal = newConstBits(s, 0x7f800000), newConstBits(s, 0xfeffffff)
	for _, c := range []float32{coef.Log0, coef.Log1, coef.Log2, coef.Log3, coef.Log4, coef.Log5, coef.Log6, coef.Log7} {
		g.p = append(g.p, newConst(s, c))
	}
	return g
}

// applyN emits ln x for each of xs (not modified) into new registers. One
// test of all their lanes picks the path: when each is a positive normal
// float (bits in [0x00800000, 0x7f800000)), the common case, the scaling of
// subnormals and the special-value blends are left out (they would change
// nothing); otherwise every vector takes apply's whole computation. The
// test adds 0x7f800000 to the bits, which maps that range onto
// [−2³¹, −2²⁴) and every other pattern onto [−2²⁴, 2³¹) (the unsigned
// comparison of bits − 0x00800000 with 0x7f000000, done signed), and
// compares with −2²⁴ − 1.
func (g *logGen) applyN(xs ...VecVirtual) []VecVirtual {
	s := g.s
	g.branches++
	slow, join := fmt.Sprintf("logSlow%d", g.branches), fmt.Sprintf("logJoin%d", g.branches)
	if s.evex {
		ks := make([]Register, len(xs))
		for j, x := range xs {
			t := s.vec()
			asm.VPADDD_BCST(g.bias.mem, x, t)
			ks[j] = asm.K()
			asm.VPCMPGTD_BCST(g.notNormal.mem, t, ks[j]) // t > −2²⁴ − 1: not a positive normal
		}
		for j := 2; j < len(ks); j++ {
			asm.KORW(ks[j], ks[0], ks[0])
		}
		asm.KORTESTW(ks[0], ks[len(ks)-1])
	} else {
		var any VecVirtual
		for j, x := range xs {
			t := s.vec()
			asm.VPADDD(g.bias.mem, x, t)
			asm.VPCMPGTD(g.notNormal.mem, t, t)
			if j == 0 {
				any = t
			} else {
				asm.VPOR(t, any, any)
			}
		}
		asm.VPTEST(any, any)
	}
	asm.JNZ(LabelRef(slow))
	ys := make([]VecVirtual, len(xs))
	for j, x := range xs {
		ys[j] = s.vec()
		g.apply(x, ys[j], false)
	}
	asm.JMP(LabelRef(join))
	asm.Label(slow)
	for j, x := range xs {
		g.apply(x, ys[j], true)
	}
	asm.Label(join)
	return ys
}

// apply emits y = ln x lane-wise, x not modified: with special, for any
// lanes; without, for positive normal lanes only (the scaling and the blends
// left out).
func (g *logGen) apply(x, y VecVirtual, special bool) {
	s := g.s
	xs, k := s.vec(), s.vec()
	src := xs // the input to the reduction: x, or x with subnormals scaled
	switch {
	case !special:
		src = x
	case s.evex:
		m := asm.K()
		g.minNormal.cmp(cmpLTOQ, x, m) // x < 2⁻¹²⁶ (also ≤ 0)
		asm.VMOVAPS(x, xs)
		g.scale.mul(x, k)
		asm.VMOVAPS(k, m, xs)
		asm.VMOVAPS_Z(g.m23.reg(), m, k)
	default:
		m := s.vec()
		g.minNormal.cmp(cmpLTOQ, x, m)
		g.scale.mul(x, k)
		asm.VBLENDVPS(m, k, x, xs)
		g.m23.and(m, k) // −23 where scaled
	}
	// e = (bits − bits(√½)) >> 23 (arithmetic), m's bits = low 23 + bits(√½).
	sh := g.sqrtHalf.reg()
	asm.VPSUBD(sh, src, xs)
	e := s.vec()
	asm.VPSRAD(U8(23), xs, e)
	asm.VCVTDQ2PS(e, e)
	if special {
		asm.VADDPS(k, e, e)
	}
	g.mant.and(xs, xs)
	asm.VPADDD(sh, xs, xs)
	f := xs
	g.one.sub(f, f)
	p := horner(s, g.p, f)
	g.mhalf.fma213(f, p) // t = −½ + f·P
	f2 := k
	asm.VMULPS(f, f, f2)
	asm.VMULPS(p, f2, f2) // f²·t
	lo := g.ln2lo.reg()
	asm.VFMADD231PS(e, lo, f2) // + e·Ln2Lo32
	asm.VADDPS(f, f2, f2)      // f + …
	g.ln2.loadInto(y)
	asm.VFMADD213PS(f2, e, y) // e·ln2 + …
	if !special {
		return
	}
	// Special values.
	if s.evex {
		m := asm.K()
		g.inf.cmp(cmpNLTUQ, x, m) // +Inf or NaN: x itself
		asm.VMOVAPS(x, m, y)
		zero := s.vec()
		s.zero(zero)
		asm.VCMPPS(U8(cmpLTOQ), zero, x, m) // x < 0
		asm.VMOVAPS(g.nan.reg(), m, y)
		asm.VCMPPS(U8(0x00), zero, x, m) // x == ±0 (EQ_OQ)
		asm.VMOVAPS(g.ninf.reg(), m, y)
		return
	}
	m := s.vec()
	g.inf.cmp(cmpNLTUQ, x, m)
	asm.VBLENDVPS(m, x, y, y)
	zero := s.vec()
	s.zero(zero)
	asm.VCMPPS(U8(cmpLTOQ), zero, x, m)
	asm.VBLENDVPS(m, g.nan.mem, y, y)
	asm.VCMPPS(U8(0x00), zero, x, m)
	asm.VBLENDVPS(m, g.ninf.mem, y, y)
}
