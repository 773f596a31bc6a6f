package fallback

// LSTMCell sets, for j < H = len(c), with the pre-activations
// gates = [i; f; g; o] (4H) and the bias b (4H),
//
//	c' = σ(f + b_f)·c + σ(i + b_i)·tanh(g + b_g)
//	h' = σ(o + b_o)·tanh(c')
//
// into cOut[j] and hOut[j] (len(hOut), len(cOut) ≥ H; cOut may be c). σ and
// tanh are Sigmoid's and Tanh's; every sum and product is rounded once to
// float32 (the explicit conversions forbid Go to fuse a product into a sum),
// the operations of kernels.LSTMCell on every ISA.
func LSTMCell(hOut, cOut, gates, b, c []float32) {
	H := len(c)
	gates, b = gates[:4*H], b[:4*H]
	hOut, cOut = hOut[:H], cOut[:H]
	for j, cj := range c {
		i := sigmoid32(gates[j] + b[j])
		f := sigmoid32(gates[H+j] + b[H+j])
		g := tanh32(gates[2*H+j] + b[2*H+j])
		o := sigmoid32(gates[3*H+j] + b[3*H+j])
		cn := float32(f*cj) + float32(i*g)
		cOut[j] = cn
		hOut[j] = o * tanh32(cn)
	}
}

// GRUCell sets, for j < H = len(h), with gates = [r; z; n] (3H: the r and z
// pre-activations, then W_nx·x), nh = W_nh·h (H) and the biases bx, bh (3H),
//
//	r = σ((r + bx_r) + bh_r), z = σ((z + bx_z) + bh_z)
//	n = tanh((n + bx_n) + r·(nh + bh_n))
//	h' = n + z·(h − n)
//
// into hOut[j] (len(hOut) ≥ H; hOut may be h). Every sum, difference and
// product is rounded once to float32, as in kernels.GRUCell on every ISA.
func GRUCell(hOut, gates, nh, bx, bh, h []float32) {
	H := len(h)
	gates, bx, bh = gates[:3*H], bx[:3*H], bh[:3*H]
	hOut, nh = hOut[:H], nh[:H]
	for j, hj := range h {
		r := sigmoid32((gates[j] + bx[j]) + bh[j])
		z := sigmoid32((gates[H+j] + bx[H+j]) + bh[H+j])
		n := tanh32((gates[2*H+j] + bx[2*H+j]) + float32(r*(nh[j]+bh[2*H+j])))
		hOut[j] = n + float32(z*(hj-n))
	}
}
