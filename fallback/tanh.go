package fallback

import "math"

// Tanh sets dst[i] = tanh(x[i]); len(dst) ≥ len(x), and dst may be x.
func Tanh(dst, x []float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = tanh32(v)
	}
}

func tanh32(x float32) float32 { return float32(math.Tanh(float64(x))) }
