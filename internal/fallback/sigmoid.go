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
// eʳ = 1 + r·q(r) give e^t = 2ⁿ·(1 + r·q), so, with p = 2⁻ⁿ (numerator and
// denominator multiplied by it),
//
//	σ(x) = 1/(1 + 2ⁿ·(1 + r·q)) = p / ((p + 1) + r·q).
//
// p is a power of two made from the rounding's bits (n ∈ [−29, 126] by the
// clamp), p + 1 is exact for |n| ≤ 23, and the denominator takes one FMA with
// the exact product r·q: after the polynomial the result rounds twice (the
// FMA, the division) whatever the sign of x. For |x| above about 16
// (|n| > 23) p + 1 rounds too. For x below SigmoidLo, where σ(x) < 2⁻¹²⁶, the
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
	p := math.Float32frombits(0x3f800000 - math.Float32bits(s)<<23) // 2⁻ⁿ: n in the exponent field
	y := p / fma32(r, q, p+1)
	if x < coef.SigmoidLo {
		return 0
	}
	return y
}
