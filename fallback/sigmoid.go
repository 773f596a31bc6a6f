package fallback

import (
	"math"

	"github.com/heedml/heed/internal/coef"
)

// Sigmoid sets dst[i] = 1/(1+e^−x[i]); len(dst) ≥ len(x), and dst may be x.
//
// It is the algorithm of the assembly kernels in float32, operation for
// operation (see kernels.Sigmoid), each FMA emulated exactly (fma32). With
// t = −x clamped to [−SigmoidClamp, 87.5] (NaN kept), Exp's reduction
// n = round(t·log₂e), r = t − n·ln2 (Cody–Waite) and Exp's polynomial
// eʳ = 1 + r·q(r) give e^t = 2ⁿ·(1 + r·q), so
//
//	σ(x) = 1/(1 + 2ⁿ·(1 + r·q)) = A / ((1 + A·w) + w·(r·q)),
//	A = min(1, 2⁻ⁿ), w = min(1, 2ⁿ),
//
// (divide numerator and denominator by 2ⁿ when n ≥ 0). A·w = 2^−|n| is exact,
// so is 1 + A·w for |n| ≤ 23, and the denominator, in [1, 2.42), takes one
// FMA: the result rounds twice (the FMA, the division) after the polynomial,
// whatever the sign of x. For x below SigmoidLo, where σ(x) < 2⁻¹²⁶, the
// result is +0 (flushed, as Exp does).
func Sigmoid(dst, x []float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = sigmoid32(v)
	}
}

func sigmoid32(x float32) float32 {
	t := max(min(-x, coef.SigmoidTHi), -coef.SigmoidClamp) // NaN stays NaN
	s := fma32(t, coef.Log2e, coef.Shifter)
	n := s - coef.Shifter
	r := fma32(-n, coef.Ln2Hi, t)
	r = fma32(-n, coef.Ln2Lo, r)
	q := fma32(fma32(fma32(fma32(fma32(coef.Exp6, r, coef.Exp5), r, coef.Exp4), r, coef.Exp3), r, coef.Exp2), r, coef.Exp1)
	nb := math.Float32bits(s) << 23                  // n in the exponent field
	a := min(1, math.Float32frombits(0x3f800000-nb)) // 2⁻ⁿ
	w := min(1, math.Float32frombits(0x3f800000+nb)) // 2ⁿ
	d := fma32(w, r*q, 1+a*w)
	y := a / d
	if x < coef.SigmoidLo {
		return 0
	}
	return y
}
