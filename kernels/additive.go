package kernels

// AdditiveScore sets dst[s] = Σᵢ v[i]·tanh(q[i] + K[s,i]) for every row s of k:
// the Bahdanau score vᵀtanh(W₁h + W₂h̄ₛ) with q = W₁h and the rows of k the
// cached W₂h̄ₛ, all rows in one call. The tanh values never go to memory. It
// panics unless len(dst) = k.Rows and len(q) = len(v) = k.Cols; dst must not
// overlap the inputs. With k.Cols = 0 every score is 0.
//
// Accuracy: with d = k.Cols, sᵢ = q[i] + K[s,i] and tᵢ = tanh(sᵢ) exactly,
//
//	|error| ≤ Σᵢ|v[i]|·(5u·|tᵢ| + 2η) + γ_d·Σᵢ|v[i]|·((1+5u)·|tᵢ| + 2η) + d·η
//
// (u = 2⁻²⁴, η = 2⁻¹⁴⁹, γ_d = d·u/(1−d·u)): rounding sᵢ to float32 moves tanh by
// at most u·|tᵢ| (as x·sech²x ≤ tanh x), Tanh's 2-ULP contract adds 4u·|tᵢ|
// (2η when tᵢ is subnormal), and the products and their sum, in any order,
// add γ_d of Σ|v[i]·t̂ᵢ| plus η per underflowing product. NaN and Inf
// propagate as in IEEE arithmetic (tanh(±Inf) = ±1; an infinite v[i] times
// tanh(0) = 0 gives NaN), the same on every ISA; a score whose terms overflow
// may overflow in one summation order and not another.
func AdditiveScore(dst []float32, k Matrix, q, v []float32) {
	k.check("AdditiveScore", "k")
	if len(dst) != k.Rows || len(q) != k.Cols || len(v) != k.Cols {
		panicf("AdditiveScore: k is %d×%d but len(dst)=%d, len(q)=%d, len(v)=%d", k.Rows, k.Cols, len(dst), len(q), len(v))
	}
	if k.Cols == 0 {
		clear(dst)
		return
	}
	additiveScore(dst, k.Data, k.Stride, q, v)
}
