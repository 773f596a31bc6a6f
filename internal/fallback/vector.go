package fallback

import "math"

// Dot returns Σ x[i]·y[i]; len(y) ≥ len(x).
func Dot(x, y []float32) float32 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i <= len(x)-4; i += 4 {
		x4, y4 := x[i:i+4:i+4], y[i:i+4:i+4]
		s0 += x4[0] * y4[0]
		s1 += x4[1] * y4[1]
		s2 += x4[2] * y4[2]
		s3 += x4[3] * y4[3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// Axpy sets y[i] += alpha·x[i]; len(y) ≥ len(x).
func Axpy(alpha float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += alpha * v
	}
}

// Scale sets x[i] *= alpha.
func Scale(alpha float32, x []float32) {
	for i := range x {
		x[i] *= alpha
	}
}

// Sum returns Σ x[i].
func Sum(x []float32) float32 {
	var s0, s1, s2, s3 float32
	i := 0
	for ; i <= len(x)-4; i += 4 {
		x4 := x[i : i+4 : i+4]
		s0 += x4[0]
		s1 += x4[1]
		s2 += x4[2]
		s3 += x4[3]
	}
	for ; i < len(x); i++ {
		s0 += x[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// Max returns the largest element: −Inf for an empty slice, NaN if any element
// is NaN, and +0 rather than −0 when both are the largest.
func Max(x []float32) float32 {
	m := float32(math.Inf(-1))
	for _, v := range x {
		switch {
		case v > m:
			m = v
		case v != v:
			return v
		case v == 0 && m == 0 && !math.Signbit(float64(v)):
			m = v
		}
	}
	return m
}
