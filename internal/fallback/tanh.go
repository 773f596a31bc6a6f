package fallback

import (
	"math"

	"github.com/heedml/heed/internal/coef"
)

// Tanh sets dst[i] = tanh(x[i]); len(dst) ≥ len(x), and dst may be x.
//
// It is the algorithm of the assembly kernels in float32, operation for
// operation (see kernels.Tanh), so it gives the same bits as AVX2, AVX-512 and
// NEON. One formula for every a = |x|, the sign of x put back at the end:
//
//	tanh(a) = E/(E+2),  E = expm1(2a) = 2ⁿ⁺¹·h + (2ⁿ − 1),
//
// with a clamped to TanhSat (where the quotient rounds to exactly 1),
// n = round(2a·log₂e) by TanhShifter, r = a − n·Ln2/2 ∈ [−ln2/4, ln2/4] and
// h = expm1(2r)/2 ≈ r + r²·(1 + r·(TanhE1 + … + r·TanhE4)), which is accurate
// relative to expm1 as r → 0, so no separate branch for small a is needed.
// 2ⁿ⁺¹ is the shifted bits of the rounding, and 2ⁿ − 1 = 2ⁿ⁺¹·½ − 1 one FMA
// (exact for n ≤ 24; beyond, E+2 damps the rounding). NaN stays NaN through
// the arithmetic (the clamp is a NaN-propagating min), ±0 keep their sign.
//
// The exhaustive sweep (kernels.TestExhaustive) finds at most 2 ULP against
// float64 math.Tanh over all 2³² float32 inputs, the same on every ISA (at
// x = 0.000117587; 1352912 inputs above 1 ULP). kernels/DESIGN.md records why
// this formulation was chosen.
func Tanh(dst, x []float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = tanh32(v)
	}
}

func tanh32(x float32) float32 {
	const sign = 1 << 31
	a := min(math.Float32frombits(math.Float32bits(x)&^sign), coef.TanhSat) // NaN stays NaN
	t := fma32(a, 2*coef.Log2e, coef.TanhShifter)
	n := t - coef.TanhShifter
	// The FMAs whose float64 evaluation is exact round once as written: for
	// n ≥ 1, a ≥ ln2/4 and r, h are multiples of 2⁻²⁶ and 2⁻⁵⁰ (for n = 0,
	// r = a and E = 2h), so a − n·ln2/2 and 2ⁿ⁺¹·h + 2ⁿ − 1 fit 53 bits.
	r := float32(float64(a) - float64(n)*float64(coef.Ln2/2))
	q := fma32(fma32(fma32(fma32(coef.TanhE4, r, coef.TanhE3), r, coef.TanhE2), r, coef.TanhE1), r, 1) // 1 + r·(E1 + … + r·E4)
	h := fma32(float32(r*r), q, r)                                                                     // expm1(2r)/2
	p := math.Float32frombits(math.Float32bits(t) << 23)                                               // 2ⁿ⁺¹
	m := float32(float64(p)*0.5 - 1)                                                                   // 2ⁿ − 1
	e := float32(float64(p)*float64(h) + float64(m))                                                   // expm1(2a)
	y := float32(e / float32(e+2))
	return math.Float32frombits(math.Float32bits(y) | math.Float32bits(x)&sign)
}

// fma32 returns a·b + c rounded once to float32, as the FMA instructions of
// the assembly do (Go's float32 a*b + c may or may not be fused, depending on
// the architecture). The float64 product is exact, and rounding the float64
// sum s to float32 rounds a·b + c correctly unless s is a float32 midpoint,
// onto which its own rounding may have moved it, or below the normal range,
// where the midpoints lie elsewhere: those rare sums take fma32Exact.
// (Rounded from s, 6 of the 2³² inputs of Tanh would round differently.)
func fma32(a, b, c float32) float32 {
	s := float64(a)*float64(b) + float64(c)
	if u := math.Float64bits(s); u&(1<<29-1) == 1<<28 || u&(0x7ff<<52) < (1023-126)<<52 {
		return fma32Exact(a, b, c)
	}
	return float32(s)
}

// fma32Exact is fma32 for every a·b + c: the float64 sum rounded to odd (its
// error from TwoSum), whose rounding to float32 is that of the exact sum
// (53 ≥ 24+2 bits).
//
//go:noinline
func fma32Exact(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	s := p + float64(c)
	z := s - p
	if e := (p - (s - z)) + (float64(c) - z); e != 0 && !math.IsInf(s, 0) && math.Float64bits(s)&1 == 0 {
		if (e > 0) == (s > 0) {
			s = math.Float64frombits(math.Float64bits(s) + 1)
		} else {
			s = math.Float64frombits(math.Float64bits(s) - 1)
		}
	}
	return float32(s)
}
