package fallback

// CrossEntropyExp is the exponential pass and the gradient pass of
// kernels.SoftmaxCrossEntropy over one row x of n ≥ 1 logits, for a finite
// m = max x and x free of NaN: with eᵢ = e^(x[i]−m) (Exp of the rounded
// difference), it returns sum = Σ eᵢ, dsum = Σ (x[i] − m) and et = e_t, and
// sets dst[i] = fma(eᵢ, c, −shift) with c = scale/sum rounded once, for every
// i (the caller rewrites dst[t]). len(dst) ≥ len(x), and dst may be x; t < n.
func CrossEntropyExp(dst, x []float32, t int, m, scale, shift float32) (sum, dsum, et float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		d := v - m
		e := exp32(d)
		dst[i] = e
		sum += e
		dsum += d
	}
	et = dst[t]
	c := scale / sum
	for i, e := range dst {
		dst[i] = fma32(e, c, -shift)
	}
	return sum, dsum, et
}
