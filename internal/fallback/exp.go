package fallback

import (
	"math"

	"github.com/heedml/heed/internal/coef"
)

// Exp sets dst[i] = eˣ⁽ⁱ⁾; len(dst) ≥ len(x), and dst may be x.
//
// It is the algorithm of the assembly kernels in float32 (see kernels.Exp):
// n = round(x·log₂e), r = x − n·ln2 (Cody–Waite), eʳ by a degree-6 polynomial,
// 2ⁿ added to the exponent bits; +0 below ExpLo, +Inf from ExpHi on.
func Exp(dst, x []float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = exp32(v)
	}
}

func exp32(x float32) float32 {
	if !(x >= coef.ExpLo) { // x < ExpLo or NaN
		if x != x {
			return x
		}
		return 0
	}
	if x >= coef.ExpHi {
		return float32(math.Inf(1))
	}
	return expCore(x)
}

// expCore returns eˣ for ExpLo ≤ x < ExpHi (the result is then normal, or
// within an ULP of 2⁻¹²⁶).
func expCore(x float32) float32 {
	t := x*coef.Log2e + coef.Shifter
	n := t - coef.Shifter
	r := x - n*coef.Ln2Hi
	r -= n * coef.Ln2Lo
	p := 1 + r*(coef.Exp1+r*(coef.Exp2+r*(coef.Exp3+r*(coef.Exp4+r*(coef.Exp5+r*coef.Exp6)))))
	return math.Float32frombits(math.Float32bits(p) + math.Float32bits(t)<<23)
}
