package fallback

// AdditiveScore sets dst[s] = Σᵢ v[i]·tanh(q[i] + K[s,i]), the Bahdanau score of
// every row of the len(dst)×len(q) matrix K whose row s is
// k[s*stride : s*stride+len(q)]; len(v) ≥ len(q).
func AdditiveScore(dst, k []float32, stride int, q, v []float32) {
	d := len(q)
	v = v[:d]
	if d == 0 {
		clear(dst)
		return
	}
	for s := range dst {
		row := k[s*stride : s*stride+d]
		var acc float32
		for i, qi := range q {
			acc += v[i] * tanh32(qi+row[i])
		}
		dst[s] = acc
	}
}
