package fallback

import (
	"math"

	. "github.com/heedml/heed/internal/coef"
)

// Tanh sets dst[i] = tanh(x[i]); len(dst) ≥ len(x), and dst may be x.
//
// It is the algorithm of the assembly kernels in float32 (see kernels.Tanh): an
// odd polynomial below TanhSmall, 1 − 2/(e²ˣ+1) above, ±1 from TanhSat on.
func Tanh(dst, x []float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = tanh32(v)
	}
}

func tanh32(x float32) float32 {
	a := math.Float32frombits(math.Float32bits(x) &^ (1 << 31))
	var y float32
	switch {
	case a < TanhSmall:
		u := a * a
		y = a + a*u*(Tanh1+u*(Tanh2+u*(Tanh3+u*(Tanh4+u*(Tanh5+u*Tanh6)))))
	case a < TanhSat:
		y = 1 - 2/(expCore(a+a)+1)
	case a == a:
		y = 1
	default:
		return x
	}
	return math.Float32frombits(math.Float32bits(y) | math.Float32bits(x)&(1<<31))
}
