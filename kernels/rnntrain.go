package kernels

// The element-wise passes of LSTM and GRU training: forwards that keep what
// the backward needs, and the backward of one step. The recurrence's products
// are the caller's (rnn.LSTM.Forward and Backward run them through Gemm).

// LSTMCellTrain is [LSTMCell] that also writes what [LSTMCellBackward]
// needs: with i, f, g, o the activated gates and c' the new cell state of
// position j < H = len(c),
//
//	act[j] = i, act[H+j] = f, act[2H+j] = g, act[3H+j] = o, act[4H+j] = tanh(c')
//
// (act has 5H elements: the gates in PyTorch's order, then tanh(c')). hOut
// and cOut get LSTMCell's bits, on every ISA, and act the values those bits
// were computed from (σ and tanh are Sigmoid's and Tanh's); so i, f, o lie
// in [0, 1] and g and tanh(c') in [−1, 1], or are NaN.
//
// It panics, naming the lengths, unless len(gates) = len(b) = 4H, len(act) =
// 5H and len(hOut) = len(cOut) = H. cOut may be c (in place); it panics,
// naming the arguments, on any other overlap of an output with an input or
// another output. It does not allocate and is safe for concurrent use on
// disjoint outputs.
func LSTMCellTrain(hOut, cOut, act, gates, b, c []float32) {
	const k = "LSTMCellTrain"
	H := len(c)
	if len(gates) != 4*H || len(b) != 4*H || len(act) != 5*H || len(hOut) != H || len(cOut) != H {
		panicf("%s: len(c)=%d, len(hOut)=%d, len(cOut)=%d, len(act)=%d, len(gates)=%d, len(b)=%d; want len(hOut)=len(cOut)=len(c), len(act)=5·len(c) and len(gates)=len(b)=4·len(c)",
			k, H, len(hOut), len(cOut), len(act), len(gates), len(b))
	}
	checkOutputs(k, []string{"hOut", "cOut", "act"}, [][]float32{hOut, cOut, act},
		[]string{"gates", "b", "c"}, [][]float32{gates, b, c}, 1, 2)
	if H > 0 {
		lstmCellTrain(hOut, cOut, act, gates, b, c)
	}
}

// LSTMCellBackward is the element-wise backward of one LSTM step, in one pass
// over H = len(cPrev): from act (5H: i, f, g, o, tanh(c') as
// [LSTMCellTrain] wrote them for the step), the step's previous cell state
// cPrev, the gradient dh of its output h' and the gradient dc of c' that does
// not come through h' (from the next step, or of the final state), it sets
// the gradients of the step's gate pre-activations and of cPrev:
//
//	e  = (dh·o)·(1 − tc·tc)                      tc = tanh(c')
//	dc̃ = dc + e                                  the whole gradient of c'
//	dGates[j]    = (dc̃·g)·(i·(1 − i))            i's pre-activation
//	dGates[H+j]  = (dc̃·cPrev)·(f·(1 − f))        f's
//	dGates[2H+j] = (dc̃·i)·(1 − g·g)              g's
//	dGates[3H+j] = (dh·tc)·(o·(1 − o))           o's
//	dcPrev[j]    = dc̃·f
//
// dGates (4H) is the gradient of W·[x; h] + b, in its order: the caller
// multiplies it into the weights' and the inputs' gradients.
//
// Every operation is one float32 instruction rounded once, in the order the
// parentheses give (none is fused into a multiply-add), so the results have
// the same bits on every ISA (a NaN result's payload is unspecified).
//
// Error bound, for act as LSTMCellTrain writes it (u = 2⁻²⁴, γₙ = n·u/(1−n·u),
// away from underflow): against the exact formulas above evaluated on the
// float32 inputs, dc̃ is within E = u·|dc| + γ₄·|dh·o|; dGates[3H+j] is
// within γ₄·|dh·tc·o|; dcPrev within (1+u)·|f|·E + u·|dc̃·f|; and each of
// the other three, the product of dc̃ and its factors F (g·i, cPrev·f, i),
// within (1+γ₄)·|F|·E + γ₄·|dc̃·F|. (A factor 1 − x with x ∈ [0, 1] is
// within u of its value, and 1 − x·x with |x| ≤ 1 within u·(1+u), so a
// product of such factors with k roundings is within γₖ of the product of
// their magnitudes, each |1 − x| and |1 − x²| counted as 1.) These hold for
// any dh, dc and cPrev; how the errors of the forward's saved values carry
// through is the caller's analysis (rnn's tests carry it step by step).
//
// Special values follow IEEE arithmetic: NaN in an input reaches the outputs
// that read it; a saturated gate (i, f or o exactly 0 or 1, g or tc exactly
// ±1) gives its pre-activation a zero gradient, or NaN when the gradient it
// multiplies is infinite (Inf·0).
//
// It panics, naming the lengths, unless len(act) = 5H, len(dGates) = 4H and
// len(dcPrev) = len(dh) = len(dc) = H. dcPrev may be dc (in place); it
// panics, naming the arguments, on any other overlap of an output with an
// input or the other output. It does not allocate and is safe for concurrent
// use on disjoint outputs.
func LSTMCellBackward(dGates, dcPrev, act, cPrev, dh, dc []float32) {
	const k = "LSTMCellBackward"
	H := len(cPrev)
	if len(act) != 5*H || len(dGates) != 4*H || len(dcPrev) != H || len(dh) != H || len(dc) != H {
		panicf("%s: len(cPrev)=%d, len(dGates)=%d, len(dcPrev)=%d, len(act)=%d, len(dh)=%d, len(dc)=%d; want len(dGates)=4·len(cPrev), len(act)=5·len(cPrev) and len(dcPrev)=len(dh)=len(dc)=len(cPrev)",
			k, H, len(dGates), len(dcPrev), len(act), len(dh), len(dc))
	}
	checkOutputs(k, []string{"dGates", "dcPrev"}, [][]float32{dGates, dcPrev},
		[]string{"act", "cPrev", "dh", "dc"}, [][]float32{act, cPrev, dh, dc}, 1, 3)
	if H > 0 {
		lstmCellBackward(dGates, dcPrev, act, cPrev, dh, dc)
	}
}

// GRUCellTrain is [GRUCell] that also writes what [GRUCellBackward] needs:
// with r, z, n the gates of position j < H = len(h) and q = nh + bh_n the
// recurrent half of n's argument,
//
//	act[j] = r, act[H+j] = z, act[2H+j] = n, act[3H+j] = q
//
// (act has 4H elements). hOut gets GRUCell's bits, on every ISA, and act the
// values those bits were computed from (σ and tanh are Sigmoid's and
// Tanh's): r, z in [0, 1] and n in [−1, 1], or NaN.
//
// It panics, naming the lengths, unless len(gates) = len(bx) = len(bh) = 3H,
// len(act) = 4H and len(nh) = len(hOut) = H. hOut may be h (in place); it
// panics, naming the arguments, on any other overlap of an output with an
// input or the other output. It does not allocate and is safe for concurrent
// use on disjoint outputs.
func GRUCellTrain(hOut, act, gates, nh, bx, bh, h []float32) {
	const k = "GRUCellTrain"
	H := len(h)
	if len(gates) != 3*H || len(bx) != 3*H || len(bh) != 3*H || len(act) != 4*H || len(nh) != H || len(hOut) != H {
		panicf("%s: len(h)=%d, len(hOut)=%d, len(act)=%d, len(gates)=%d, len(nh)=%d, len(bx)=%d, len(bh)=%d; want len(hOut)=len(nh)=len(h), len(act)=4·len(h) and len(gates)=len(bx)=len(bh)=3·len(h)",
			k, H, len(hOut), len(act), len(gates), len(nh), len(bx), len(bh))
	}
	checkOutputs(k, []string{"hOut", "act"}, [][]float32{hOut, act},
		[]string{"gates", "nh", "bx", "bh", "h"}, [][]float32{gates, nh, bx, bh, h}, 0, 4)
	if H > 0 {
		gruCellTrain(hOut, act, gates, nh, bx, bh, h)
	}
}

// GRUCellBackward is the element-wise backward of one GRU step, in one pass
// over H = len(h): from act (4H: r, z, n, q as [GRUCellTrain] wrote them for
// the step), the step's previous state h and the gradient dh of its output
// h' = n + z·(h − n), it sets
//
//	dn  = dh·(1 − z)                  dz  = dh·(h − n)
//	dan = dn·(1 − n·n)                dq  = dan·r
//	dar = (dan·q)·(r·(1 − r))         daz = dz·(z·(1 − z))
//	dGx[j], dGx[H+j], dGx[2H+j] = dar, daz, dan
//	dGh[j], dGh[H+j], dGh[2H+j] = dar, daz, dq
//	dhPrev[j] = dh·z
//
// dGx (3H) is the gradient of W_x·x + bx (the r, z and n rows over the
// input, PyTorch's weight_ih and bias_ih), dGh (3H) that of W_h·h + bh
// (weight_hh and bias_hh: n's row through r), and dhPrev the part of h's
// gradient that does not pass through the products (the caller adds
// dGh·W_h). The gradients of r and z appear in both.
//
// Every operation is one float32 instruction rounded once, in the order the
// parentheses give (1 − z computed once, none fused into a multiply-add),
// so the results have the same bits on every ISA (a NaN result's payload is
// unspecified).
//
// Error bound, for act as GRUCellTrain writes it (u = 2⁻²⁴, γₙ = n·u/(1−n·u),
// away from underflow): against the exact formulas on the float32 inputs,
// each result is within γₖ·M, with M the product of the magnitudes of its
// factors (each 1 − x counted as 1, h − n as |h − n|) and k its roundings:
// dan (|dh|) 5, dq (|dh·r|) 6, dar (|dh·q·r|) 9, daz (|dh·(h − n)·z|) 5 and
// dhPrev (|dh·z|) 1.
//
// Special values follow IEEE arithmetic: NaN in an input reaches the outputs
// that read it; a saturated gate gives its pre-activation a zero gradient,
// or NaN when the gradient it multiplies is infinite (Inf·0).
//
// It panics, naming the lengths, unless len(act) = 4H, len(dGx) = len(dGh) =
// 3H and len(dhPrev) = len(dh) = H. dhPrev may be dh (in place); it panics,
// naming the arguments, on any other overlap of an output with an input or
// another output. It does not allocate and is safe for concurrent use on
// disjoint outputs.
func GRUCellBackward(dGx, dGh, dhPrev, act, h, dh []float32) {
	const k = "GRUCellBackward"
	H := len(h)
	if len(act) != 4*H || len(dGx) != 3*H || len(dGh) != 3*H || len(dhPrev) != H || len(dh) != H {
		panicf("%s: len(h)=%d, len(dGx)=%d, len(dGh)=%d, len(dhPrev)=%d, len(act)=%d, len(dh)=%d; want len(dGx)=len(dGh)=3·len(h), len(act)=4·len(h) and len(dhPrev)=len(dh)=len(h)",
			k, H, len(dGx), len(dGh), len(dhPrev), len(act), len(dh))
	}
	checkOutputs(k, []string{"dGx", "dGh", "dhPrev"}, [][]float32{dGx, dGh, dhPrev},
		[]string{"act", "h", "dh"}, [][]float32{act, h, dh}, 2, 2)
	if H > 0 {
		gruCellBackward(dGx, dGh, dhPrev, act, h, dh)
	}
}

// checkOutputs panics, naming the kernel and the two arguments, if two
// outputs overlap or an output overlaps an input, except that output
// outs[same] may be input ins[sameIn] exactly (the same first element and
// length: in place).
func checkOutputs(kernel string, outNames []string, outs [][]float32, inNames []string, ins [][]float32, same, sameIn int) {
	for i, o := range outs {
		for j := i + 1; j < len(outs); j++ {
			checkDisjoint(kernel, outNames[i], o, outNames[j], outs[j])
		}
		for j, in := range ins {
			if i == same && j == sameIn {
				if shifted(o, in) {
					panic(aliasError{kernel, outNames[i], inNames[j], true})
				}
				continue
			}
			checkDisjoint(kernel, outNames[i], o, inNames[j], in)
		}
	}
}
