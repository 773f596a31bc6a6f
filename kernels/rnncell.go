package kernels

// LSTMCell is the element-wise part of an LSTM step, in one pass over the
// hidden size H = len(c): from the gate pre-activations gates = W·[x; h]
// (4H, PyTorch's gate order i, f, g, o: element j of gate k at k·H + j) and
// the bias b (4H) it sets
//
//	i = σ(gᵢ + bᵢ), f = σ(g_f + b_f), g = tanh(g_g + b_g), o = σ(g_o + b_o)
//	cOut = c' = f⊙c + i⊙g
//	hOut = h' = o⊙tanh(c')
//
// It panics, naming the lengths, unless len(gates) = len(b) = 4H and
// len(hOut) = len(cOut) = H. gates and b are only read. cOut may be c (in
// place); no other overlap of an output with an input or with the other
// output is allowed.
//
// Bits: σ and tanh are Sigmoid's and Tanh's (the same instructions on each
// ISA, the same bits on every ISA), and every bias sum, product and the sum
// c' is one float32 operation rounded once (never fused into a multiply-add),
// so the results are those of the composition Add(gates, gates, b),
// Sigmoid, Tanh, Mul, Mul, Add, Tanh, Mul, bit for bit, on every ISA (a NaN
// result's payload is unspecified). NaN in an input gives NaN in the
// outputs it reaches; an infinite pre-activation (with a finite bias)
// saturates its gate (σ to 0 or 1, tanh to ±1), and an infinite c gives an
// infinite or NaN c' (Inf·0 when f = 0).
//
// LSTMCell does not allocate and is safe for concurrent use on disjoint
// outputs.
func LSTMCell(hOut, cOut, gates, b, c []float32) {
	H := len(c)
	if len(gates) != 4*H || len(b) != 4*H || len(hOut) != H || len(cOut) != H {
		panicf("LSTMCell: len(c)=%d, len(hOut)=%d, len(cOut)=%d, len(gates)=%d, len(b)=%d; want len(hOut)=len(cOut)=len(c) and len(gates)=len(b)=4·len(c)",
			H, len(hOut), len(cOut), len(gates), len(b))
	}
	if H > 0 {
		lstmCell(hOut, cOut, gates, b, c)
	}
}

// GRUCell is the element-wise part of a GRU step, in one pass over the hidden
// size H = len(h): from gates (3H: the r and z pre-activations W_r·[x; h] and
// W_z·[x; h], then W_nx·x, PyTorch's gate order r, z, n), nh = W_nh·h (H) and
// the biases bx, bh (3H each, PyTorch's bias_ih and bias_hh, in the same
// order) it sets
//
//	r = σ(g_r + bx_r + bh_r), z = σ(g_z + bx_z + bh_z)
//	n = tanh(g_n + bx_n + r⊙(nh + bh_n))
//	hOut = h' = n + z⊙(h − n)  (= (1 − z)⊙n + z⊙h)
//
// It panics, naming the lengths, unless len(gates) = len(bx) = len(bh) = 3H
// and len(nh) = len(hOut) = H. gates, nh, bx and bh are only read. hOut may
// be h (in place); no other overlap of hOut with an input is allowed.
//
// Bits: σ and tanh are Sigmoid's and Tanh's, and every other operation
// ((g + bx) + bh, nh + bh_n, r⊙(·), the sum, h − n, z⊙(h − n) and the final
// sum) is one float32 operation rounded once, so the result is that of the
// composition of Add, Sigmoid, Mul, Add, Tanh, Sub, Mul, Add, bit for bit,
// on every ISA (a NaN result's payload is unspecified). NaN in an input
// gives NaN in the outputs it reaches.
//
// GRUCell does not allocate and is safe for concurrent use on disjoint
// outputs.
func GRUCell(hOut, gates, nh, bx, bh, h []float32) {
	H := len(h)
	if len(gates) != 3*H || len(bx) != 3*H || len(bh) != 3*H || len(nh) != H || len(hOut) != H {
		panicf("GRUCell: len(h)=%d, len(hOut)=%d, len(gates)=%d, len(nh)=%d, len(bx)=%d, len(bh)=%d; want len(hOut)=len(nh)=len(h) and len(gates)=len(bx)=len(bh)=3·len(h)",
			H, len(hOut), len(gates), len(nh), len(bx), len(bh))
	}
	if H > 0 {
		gruCell(hOut, gates, nh, bx, bh, h)
	}
}
