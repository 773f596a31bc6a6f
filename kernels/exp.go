package kernels

// Exp sets dst[i] = e^x[i]. It panics if len(dst) != len(x); dst may be x, but
// must not otherwise overlap it.
//
// Accuracy: within 2 ULP of the correctly rounded result wherever that is a
// normal float32 (measured over all 2³² inputs on every ISA: at most 1 ULP).
//
// Special values, the same on every ISA: Exp(NaN) = NaN, Exp(−Inf) = +0,
// Exp(+Inf) = +Inf; Exp(x) = +Inf for x ≥ 88.72284 (0x42B17218, the smallest
// float32 whose eˣ rounds to +Inf), finite just below. Underflow flushes to
// zero: Exp(x) = +0 for x < −87.33654 (0xC2AEAC4F, where eˣ < 2⁻¹²⁶), so no
// result is subnormal except, rarely, the largest subnormal right at that
// boundary (within 2 ULP of 2⁻¹²⁶). Flushing lets the AVX2 kernel scale by 2ⁿ
// with one integer add to the exponent bits; gradual underflow would need a
// second, floating-point scaling step.
//
// Formulation: n = round(x·log₂e), r = x − n·ln2 with a two-constant
// (Cody–Waite) split of ln2, so |r| ≤ ln2/2; eʳ ≈ 1 + c₁r + … + c₆r⁶, a
// minimax polynomial fitted by asmgen/fit (relative error 1.7e-8 with its
// float32 coefficients); then 2ⁿ through the exponent bits (AVX-512:
// VRNDSCALEPS for n and VSCALEFPS for the scaling).
//
// Speed at n = 4096 on the Zen 4 development machine (medians of 5, shared
// CPU): AVX2 0.20 ns/element, AVX-512 0.18, fallback 4.3, a Go loop calling
// math.Exp 7.2. The AVX2 kernel keeps its constants in registers and branches
// over the special-value fix-ups for vectors with every lane in range (with
// every constant a memory operand it measured 0.30). Zen 4 runs 512-bit FMAs
// at half the 256-bit rate, so with the same nine FMAs per vector AVX-512
// gains little; the AVX2 scheme in 512-bit registers measured 5% slower than
// VRNDSCALEPS/VSCALEFPS. Gradual underflow on AVX2 (two floating-point
// scalings) measured 21% slower.
func Exp(dst, x []float32) {
	checkSameLen("Exp", "dst", "x", len(dst), len(x))
	exp(dst, x)
}

// Tanh sets dst[i] = tanh(x[i]). It panics if len(dst) != len(x); dst may be
// x, but must not otherwise overlap it.
//
// Accuracy: within 2 ULP of the correctly rounded result for every input
// (measured over all 2³² inputs on every ISA: at most 2 ULP, near |x| = 0.625,
// for about one input in a million; 1 ULP elsewhere).
//
// Special values, the same on every ISA: Tanh(±0) = ±0, Tanh(±Inf) = ±1,
// Tanh(NaN) = NaN, the result has the sign of x, and it is exactly ±1 wherever
// the float32 rounding of tanh is (|x| ≥ 9.010914).
//
// Formulation, split by range on a = |x|, with x's sign put back: for
// a < 0.625 an odd minimax polynomial a + a³·P(a²) of degree 11; beyond,
// 1 − 2/(e²ᵃ+1) with a clamped to 9.010914 (where it rounds to exactly 1) and
// e²ᵃ from Exp's reduction (one-constant ln2: its error is damped by
// 2e²ᵃ/(e⁴ᵃ−1) ≤ 0.62) and a degree-5 polynomial. Both branches run on every
// lane and a blend picks one. An expm1-based form, em1/(em1+2), costs fewer
// operations but measured 3 ULP near zero (three roundings in a quotient of
// size x); a rational approximation needs a division too and more care to stay
// within 2 ULP. Speed at n = 4096 on the Zen 4 development machine (medians of
// 5, shared CPU): AVX2 0.42 ns/element, AVX-512 0.34, fallback 5.9, a Go loop
// calling math.Tanh 24. The two branches take 14 multiplies and FMAs, a
// division, a compare and a blend per vector: on AVX2, leaving out four of the
// FMAs measured 12% faster and the compare and blend 8%, while keeping
// constants in registers (fewer loads) gained only 0.47 → 0.42.
func Tanh(dst, x []float32) {
	checkSameLen("Tanh", "dst", "x", len(dst), len(x))
	tanh(dst, x)
}
