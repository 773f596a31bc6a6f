package kernels

// Log sets dst[i] = ln x[i], the natural logarithm. dst may be x; it panics if
// len(dst) != len(x) or if dst otherwise overlaps x.
//
// Accuracy: within 2 ULP of the correctly rounded result for every finite
// positive input, subnormals included (measured over all of them with AVX2 and
// AVX-512: at most 1 ULP). Every ISA computes the same operations, and gives
// the same bits on the tests' samples.
//
// Special values, the same on every ISA: Log(±0) = −Inf, Log(x) = NaN for
// x < 0 (−Inf included), Log(+Inf) = +Inf, Log(NaN) = NaN, Log(1) = +0.
//
// Formulation: x = 2ᵉ·m with m ∈ [√½, √2) from the bits (a subnormal x
// scaled by 2²³ first), f = m − 1 (exact), ln x = e·ln2 + log1p(f) with
// log1p(f) ≈ f − f²/2 + f³·P(f), P of degree 7 fitted by asmgen/fit relative
// to log1p (so the error vanishes with f where ln x is small); the low part of
// ln2 joins the small terms and e·ln2 the last FMA. The x86 kernels test
// each one or two vectors of x: when all their lanes are positive normal
// floats, the scaling and the special values' blends are skipped (they would
// change nothing), so vectors holding zeros, subnormals, negatives,
// infinities or NaN take a slower path, with the same bits.
func Log(dst, x []float32) {
	checkSameLen("Log", "dst", "x", len(dst), len(x))
	checkAlias("Log", dst, "x", x)
	log(dst, x)
}

// LogSoftmax sets dst[i] = (x[i] − m) − ln Σⱼ e^(x[j]−m), m = max x: the
// logarithm of Softmax, computed without forming the probabilities, so that
// small probabilities keep their relative accuracy (beam search sums these).
// dst may be x (in place); it panics if len(dst) != len(x) or if dst otherwise
// overlaps x.
//
// Each output is within (2·|x[i] − m| + 5·ln n + 1.5·n + 4)·u of the exact
// value (absolute; u = 2⁻²⁴, n = len(x)): x[i] − m and the result round once
// each (u relative), the sum's relative error (γₙ₋₁, the exponentials' 2 ULP,
// and their arguments' rounding, at most n·u/e in all) passes to its
// logarithm as an absolute one, and the logarithm of the sum, at most ln n,
// is within 2 ULP. Terms e^(x[j]−m) below 2⁻¹²⁶ flush to zero,
// which changes the sum by less than n·2⁻¹²⁶ (the sum is at least 1).
// Special values, the same on every ISA: a NaN input makes every output NaN
// (the default quiet NaN); a row that is all −Inf (fully masked) gives all
// −Inf; when some inputs are +Inf, those k entries share the probability 1
// equally (each gets −ln k) and the others get −Inf; −Inf entries of a row
// with a finite maximum get −Inf, and an output below −MaxFloat32 (x[i] − m
// overflows) is −Inf.
func LogSoftmax(dst, x []float32) {
	checkSameLen("LogSoftmax", "dst", "x", len(dst), len(x))
	checkAlias("LogSoftmax", dst, "x", x)
	logSoftmax(dst, x)
}
