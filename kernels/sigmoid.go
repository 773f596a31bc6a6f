package kernels

// Sigmoid sets dst[i] = σ(x[i]) = 1/(1+e^−x[i]), the logistic function (the
// gates of LSTM and GRU cells). dst may be x; it panics if len(dst) !=
// len(x) or if dst otherwise overlaps x.
//
// Accuracy: within 2 ULP of the correctly rounded result wherever that is a
// normal float32 (measured over all 2³² inputs with AVX2 and AVX-512: at most
// 2 ULP, for 23152 inputs, e.g. x = −1.0991061; 1 ULP elsewhere). Every ISA
// computes the same values step for step, and gives the same bits on the
// tests' samples.
//
// Special values, the same on every ISA: Sigmoid(±0) = 0.5 exactly,
// Sigmoid(+Inf) = 1, Sigmoid(−Inf) = +0, Sigmoid(NaN) = NaN; the result is
// exactly 1 wherever the float32 rounding of σ is (x ≥ 17.32868). Underflow
// flushes to zero as in Exp: Sigmoid(x) = +0 for x < −87.33654 (0xC2AEAC4F,
// where σ(x) < 2⁻¹²⁶). Every result lies in [0, 1].
//
// Formulation, one branch-free formula for either sign of x: Exp's range
// reduction and polynomial (asmgen/fit) on t = −x, clamped to [−20, 87.5],
// give e^t = 2ⁿ·(1 + r·q(r)); then σ = p / ((p + 1) + r·q) with p = 2⁻ⁿ,
// which is 1/(1+e^t) with numerator and denominator multiplied by 2⁻ⁿ. p is a
// power of two made from the rounding's bits, p + 1 is exact for |x| below
// about 16, and the denominator takes one FMA, so the result rounds twice
// after the polynomial (the FMA and the division) for either sign, where
// 1/(1 + e^t) computed from Exp's result would round three times and pass
// e^t's whole error on for x < 0.
func Sigmoid(dst, x []float32) {
	checkSameLen("Sigmoid", "dst", "x", len(dst), len(x))
	checkAlias("Sigmoid", dst, "x", x)
	sigmoid(dst, x)
}
