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
	if len(dst) != len(x) {
		panic(expLen{len(dst), len(x)})
	}
	exp(dst, x)
}

// Tanh sets dst[i] = tanh(x[i]). It panics if len(dst) != len(x); dst may be
// x, but must not otherwise overlap it.
//
// Accuracy: within 2 ULP of the correctly rounded result for every input
// (measured over all 2³² inputs on every ISA, with identical results: at most
// 2 ULP, for about one input in 3000, e.g. at x = 0.000117587; 1 ULP
// elsewhere).
//
// Special values, the same on every ISA: Tanh(±0) = ±0, Tanh(±Inf) = ±1,
// Tanh(NaN) = NaN, the result has the sign of x, and it is exactly ±1 wherever
// the float32 rounding of tanh is (|x| ≥ 9.010914).
//
// Formulation, one branch-free formula on a = |x| with x's sign put back:
// tanh(a) = E/(E+2) with E = expm1(2a), a clamped to 9.010914 (where the
// quotient rounds to exactly 1). n = round(2a·log₂e), r = a − n·ln2/2 (one
// constant), h = expm1(2r)/2 by a polynomial r + r²·(1 + r·P(r)), P of degree
// 3, fitted relative to expm1 so that it stays accurate as r → 0 (no separate
// branch for small a), and E = 2ⁿ⁺¹·h + (2ⁿ − 1) with 2ⁿ⁺¹ built from the
// rounding's bits. That is 18 vector operations per AVX2 vector (one a
// division), against 26 for the former blend of an odd polynomial below 0.625
// with 1 − 2/(e²ᵃ+1). A free constant term in P (one more coefficient of the
// same degree) measured 3 ULP for 8 inputs, Estrin's scheme for P 3 ULP for
// one (in a float32 emulation of the sweep): E/(E+2) rounds three times in a
// quotient of the size of x, and the budget is tight. The generator interleaves two vectors' chains (AVX2) to
// hide the latency ending in the division. Speed at n = 4096 on the Zen 4
// development machine (medians of 5, shared CPU): AVX2 0.29 ns/element,
// AVX-512 0.24, fallback 18 (it emulates each FMA exactly), a Go loop calling
// math.Tanh 24.
func Tanh(dst, x []float32) {
	if len(dst) != len(x) {
		panic(tanhLen{len(dst), len(x)})
	}
	tanh(dst, x)
}
