package kernels

// Dot returns Σ x[i]·y[i]. It panics if len(x) != len(y).
//
// When no product x[i]·y[i] and no partial sum overflows, the result is
// within γₙ·Σ|x[i]·y[i]| of the exact sum (n = len(x), γₙ = n·u/(1−n·u),
// u = 2⁻²⁴) plus n·2⁻¹⁵⁰ for products that underflow. A NaN or an Inf in
// either input propagates as in IEEE arithmetic (Inf·0 = NaN, Inf − Inf =
// NaN), with the same result on every ISA.
//
// Dot does not allocate and is safe for concurrent use.
func Dot(x, y []float32) float32 {
	if len(x) != len(y) {
		panic(dotLen{len(x), len(y)})
	}
	return dot(x, y)
}
