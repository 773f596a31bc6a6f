package kernels

// Exp sets dst[i] = e^x[i], within 2 ULP of the exact result. It panics if
// len(dst) != len(x); dst may be x, but must not otherwise overlap it.
// Exp(−Inf) = +0, Exp(+Inf) = +Inf, Exp(NaN) = NaN; results beyond the largest
// float32 are +Inf.
func Exp(dst, x []float32) {
	checkSameLen("Exp", "dst", "x", len(dst), len(x))
	exp(dst, x)
}

// Tanh sets dst[i] = tanh(x[i]), within 2 ULP of the exact result. It panics if
// len(dst) != len(x); dst may be x, but must not otherwise overlap it.
// Tanh(±0) = ±0, Tanh(±Inf) = ±1, Tanh(NaN) = NaN, and the result is exactly
// ±1 wherever the float32 rounding of tanh is.
func Tanh(dst, x []float32) {
	checkSameLen("Tanh", "dst", "x", len(dst), len(x))
	tanh(dst, x)
}
