package kernels

// AdditiveScore sets dst[s] = Σᵢ v[i]·tanh(q[i] + K[s,i]) for every row s of k:
// the Bahdanau score vᵀtanh(W₁h + W₂h̄ₛ) with q = W₁h and the rows of k the
// cached W₂h̄ₛ. The tanh values never go to memory. It panics unless
// len(dst) = k.Rows and len(q) = len(v) = k.Cols; dst must not overlap the inputs.
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
