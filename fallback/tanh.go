package fallback

import (
	"math"

	. "github.com/heedml/heed/internal/coef"
)

// Tanh sets dst[i] = tanh(x[i]); len(dst) ≥ len(x), and dst may be x.
//
// It is the algorithm of the assembly kernels in float32 (see kernels.Tanh):
// on a = |x|, an odd polynomial below TanhSmall, else 1 − 2/(e²ᵃ+1) with a
// clamped to TanhSat (where it is exactly 1), and the sign of x put back.
func Tanh(dst, x []float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = tanh32(v)
	}
}

func tanh32(x float32) float32 {
	a := math.Float32frombits(math.Float32bits(x) &^ (1 << 31))
	var y float32
	if !(a >= TanhSmall) { // small, or NaN
		u := a * a
		y = a + a*u*(Tanh1+u*(Tanh2+u*(Tanh3+u*(Tanh4+u*Tanh5))))
	} else {
		y = 1 - 2/(exp2a(min(a, TanhSat))+1)
	}
	return math.Float32frombits(math.Float32bits(y) | math.Float32bits(x)&(1<<31))
}

// exp2a returns e²ᵃ for TanhSmall ≤ a ≤ TanhSat: 2a reduced by ln2 alone,
// with Tanh's degree-5 polynomial in r/2.
func exp2a(a float32) float32 {
	t := a*(2*Log2e) + Shifter
	n := t - Shifter
	r := a - n*(Ln2/2)
	p := 1 + r*(2*TExp1+r*(4*TExp2+r*(8*TExp3+r*(16*TExp4+r*(32*TExp5)))))
	return math.Float32frombits(math.Float32bits(p) + math.Float32bits(t)<<23)
}
