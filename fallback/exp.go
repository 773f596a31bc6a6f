package fallback

import "math"

// Exp sets dst[i] = eˣ⁽ⁱ⁾; len(dst) ≥ len(x), and dst may be x.
func Exp(dst, x []float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = exp32(v)
	}
}

func exp32(x float32) float32 { return float32(math.Exp(float64(x))) }
