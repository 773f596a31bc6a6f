package coef

// Range-reduction constants and thresholds shared by the assembly generator and
// package fallback, so that every ISA computes Exp and Tanh the same way and
// gives the same special values.
const (
	// Log2e is log₂e rounded to float32.
	Log2e float32 = 0x1.715476p+00
	// Shifter is 1.5·2²³: adding it to |y| < 2²² rounds y to an integer n
	// (round to nearest even) held in the low mantissa bits, so that the
	// float32 bits of y + Shifter shifted left by 23 are n's exponent field.
	Shifter float32 = 0x1.8p+23
	// Ln2Hi + Ln2Lo = ln2 (Cody–Waite split): Ln2Hi has 9 significant bits,
	// so n·Ln2Hi is exact for |n| < 2¹⁵ and x − n·Ln2Hi is exact.
	Ln2Hi float32 = 0x1.63p-01
	Ln2Lo float32 = -0x1.bd0106p-13
	// Ln2 is ln2 rounded to float32: Tanh reduces a by n·Ln2/2 alone (Ln2/2
	// is within 10⁻⁹ of ln2/2 and n ≤ 26; the exhaustive sweep stays within
	// 2 ULP without the Cody–Waite split).
	Ln2 float32 = 0x1.62e43p-01
	// TanhShifter is Shifter + 128: a·2log₂e + TanhShifter rounds to an
	// integer n held in the low bits as n + 128, so that its float32 bits
	// shifted left by 23 are those of 2ⁿ⁺¹ (for n ≤ 126).
	TanhShifter float32 = Shifter + 128

	// ExpLo is the smallest float32 x with eˣ ≥ 2⁻¹²⁶: Exp(x) = +0 for x < ExpLo.
	ExpLo float32 = -0x1.5d589ep+06 // -87.33654, 0xc2aeac4f
	// ExpHi is the smallest float32 x whose eˣ rounds to +Inf: Exp(x) = +Inf
	// for x ≥ ExpHi.
	ExpHi float32 = 0x1.62e43p+06 // 88.72284, 0x42b17218
	// TanhSat is the smallest float32 x with float32(tanh(x)) = 1: Tanh(x) = ±1
	// for |x| ≥ TanhSat.
	TanhSat float32 = 0x1.205968p+03 // 9.010914, 0x41102cb4
)
