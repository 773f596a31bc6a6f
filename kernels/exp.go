package kernels

// Exp sets dst[i] = e^x[i]. dst may be x; it panics if len(dst) != len(x) or
// if dst otherwise overlaps x.
//
// Accuracy: within 2 ULP of the correctly rounded result wherever that is a
// normal float32 (the exhaustive test over all 2³² inputs finds at most 1 ULP
// on every ISA).
//
// Special values, the same on every ISA: Exp(−Inf) = +0,
// Exp(+Inf) = +Inf; Exp(x) = +Inf for x ≥ 88.72284 (0x42B17218, the smallest
// float32 whose eˣ rounds to +Inf), finite just below. Underflow flushes to
// zero: Exp(x) = +0 for x < −87.33654 (0xC2AEAC4F, where eˣ < 2⁻¹²⁶), so no
// result is subnormal except, rarely, the largest subnormal right at that
// boundary (within 2 ULP of 2⁻¹²⁶). Exp of a NaN is that NaN, sign and payload
// kept: a quiet NaN comes back unchanged, a signalling one unchanged or
// quieted, depending on the ISA.
//
// Exp does not allocate and is safe for concurrent use on disjoint dst.
func Exp(dst, x []float32) {
	exp(dst, x)
}

// checkExpArgs panics unless Exp's arguments are valid. The dispatch of exp calls
// it first, so that Exp stays small enough to inline.
func checkExpArgs(dst, x []float32) {
	if len(dst) != len(x) {
		panic(expLen{len(dst), len(x)})
	}
	checkAlias("Exp", dst, "x", x)
}

// Tanh sets dst[i] = tanh(x[i]). dst may be x; it panics if len(dst) !=
// len(x) or if dst otherwise overlaps x.
//
// Accuracy: within 2 ULP of the correctly rounded result for every input,
// with the same bits on every ISA (the exhaustive test over all 2³² inputs
// finds at most 2 ULP, for about one input in 3000, e.g. at x = 0.000117587;
// 1 ULP elsewhere).
//
// Special values, the same on every ISA: Tanh(±0) = ±0, Tanh(±Inf) = ±1, the
// result has the sign of x, and it is exactly ±1 wherever the float32 rounding
// of tanh is (|x| ≥ 9.010914). Tanh of a NaN is a quiet NaN with the NaN's
// sign; its payload may differ between ISAs.
//
// Tanh does not allocate and is safe for concurrent use on disjoint dst.
func Tanh(dst, x []float32) {
	tanh(dst, x)
}

// checkTanhArgs panics unless Tanh's arguments are valid (called first by the
// dispatch of tanh).
func checkTanhArgs(dst, x []float32) {
	if len(dst) != len(x) {
		panic(tanhLen{len(dst), len(x)})
	}
	checkAlias("Tanh", dst, "x", x)
}
