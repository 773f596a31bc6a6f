package coef

// Thresholds and constants of Sigmoid and Log, shared by the assembly
// generator and package fallback.
const (
	// SigmoidLo is the smallest float32 x with 1/(1+e⁻ˣ) ≥ 2⁻¹²⁶ (it equals
	// ExpLo): Sigmoid(x) = +0 for x < SigmoidLo.
	SigmoidLo float32 = -0x1.5d589ep+06 // -87.33654, 0xc2aeac4f
	// SigmoidClamp bounds −x from below: σ(x) rounds to 1 from x = 17.32868
	// (0x418aa123) on, and clamping x to 20 keeps 2⁻ⁿ within range.
	SigmoidClamp float32 = 20
	// SigmoidTHi bounds −x from above: n = round(87.5·log₂e) = 126 keeps 2⁻ⁿ
	// normal; inputs below SigmoidLo are flushed to +0 afterwards.
	SigmoidTHi float32 = 87.5

	// LogSqrtHalf is the float32 bits of √½ (rounded down): Log splits
	// x = 2ᵉ·m with m ∈ [√½, √2) by subtracting these bits from x's.
	LogSqrtHalf = 0x3f3504f3
	// Ln2Lo32 = ln2 − Ln2 (to float32): Log adds e·Ln2Lo32 to the small
	// terms, e·Ln2 in the final FMA.
	Ln2Lo32 float32 = -0x1.05c61p-29
)
