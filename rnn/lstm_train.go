package rnn

import (
	"fmt"

	"github.com/heedml/heed/internal/inuse"
	"github.com/heedml/heed/kernels"
)

// LSTMGrads is where [LSTM.Backward] adds the gradients of an LSTM's
// parameters: W (4H × (In+H), the layout of the cell's weights, any stride)
// and B (4H, the gradient of b = PyTorch's bias_ih + bias_hh, which is also
// each of theirs). Backward accumulates (+=) into them, so a framework zeroes
// them once per training step. A field left empty (a zero Matrix, a nil
// slice) is not wanted: it is neither computed nor written.
type LSTMGrads struct {
	W kernels.Matrix
	B []float32
}

// LSTMTape is what [LSTM.Forward] keeps of a sequence for [LSTM.Backward]:
// for each of the T steps of the B sequences, the activated gates and
// tanh(c_t) (5H floats per sequence, kernels.LSTMCellTrain's act), h_{t−1}
// and c_{t−1} (H each), and the pre-activations (4H), whose room Backward
// reuses for their gradients; 11H floats per sequence and step in all, plus
// the products' scratch and the recurrent weights packed once per call. The
// zero value is ready to use; it grows to the largest sequence it has held,
// and a later call with at most as many steps and sequences allocates
// nothing. A tape holds one Forward at a time (the last); it is not safe for
// concurrent use.
type LSTMTape struct {
	seqWork
	cell *LSTM
	g    []float32 // T·B × 4H: the pre-activations; after Backward, their gradients
	act  []float32 // T·B × 5H: i, f, g, o, tanh(c_t)
	c    []float32 // T·B × H: c_{t−1} of each step (c_0 first)
	dc   []float32 // B × H: the gradient of the cell state being propagated
	busy inuse.Flag
}

// Steps returns the steps T and the sequences B of the Forward the tape
// holds (0, 0 before any).
func (tp *LSTMTape) Steps() (T, B int) { return tp.steps, tp.batch }

// Forward runs the cell over T steps of B sequences at once and keeps in tp
// what Backward needs. The matrices are step-major, as PyTorch's (T, B, ·)
// tensors laid out in memory: x is T·B × In, row (t−1)·B + b holding x_t of
// sequence b, and hs (T·B × H) gets h_t in the same row, t = 1…T. From the
// initial states h0 and c0 (B × H: B is h0.Rows, T = x.Rows/B) it computes
// Step's recurrence
//
//	[i; f; g; o] = W·[x_t; h_{t−1}] + b,  c_t = σ(f)⊙c_{t−1} + σ(i)⊙tanh(g),  h_t = σ(o)⊙tanh(c_t)
//
// and writes cT = c_T (B × H); h_T is hs's last B rows.
//
// The input half of the products, X·W_xᵀ for all T·B rows, is one matrix
// product (kernels.GemmScratch.Gemm); each step then adds h_{t−1}·W_hᵀ for
// its B rows with one product against W_h packed once per call
// (kernels.PackedB), and one kernels.LSTMCellTrain pass per sequence does
// the rest. Every product runs on the calling goroutine.
//
// Accuracy: each pre-activation is within γ_{In+H+3}·(Σ|terms| + |b|) of
// W·[x_t; ĥ_{t−1}] + b on the computed ĥ_{t−1} (the two products' bounds,
// γ_{In+1} and γ_{H+1}, and the bias sum), and the rest is LSTMCell's pass
// (the same bits, on every ISA); the error of the sequence is these bounds
// carried through the recurrence (the tests check every output against that
// propagation, computed step by step beside a float64 evaluation). The bits
// depend on the ISA only through the products' summation order.
//
// It panics, naming the shapes, unless x is T·B × In and hs is T·B × H for
// some T ≥ 0, and h0, c0 and cT are B × H (any strides). cT may be c0 (in
// place); it panics, naming them, if hs or cT overlaps another argument
// (otherwise) or the cell's weights. The caller keeps x unchanged until
// Backward (it reads it again); hs, h0 and c0 may change (the tape holds
// copies of the states it needs).
//
// Forward and Backward read the cell's weights and bias anew at each call
// (StepBatch's packed copy is not theirs), so an optimizer may update them
// in place between training steps, though not between a Forward and its
// Backward. Forward reads only the cell's weights and bias and writes only
// tp and the outputs: goroutines may share a cell, each with its own tape
// (the cell's Step and StepBatch, which use its own workspace, stay one
// goroutine's at a time). It allocates nothing once tp has grown.
func (l *LSTM) Forward(tp *LSTMTape, hs, cT, x, h0, c0 kernels.Matrix) {
	const call = "LSTM.Forward"
	B, H, In := h0.Rows, l.Hidden, l.In
	T := 0
	if B > 0 {
		T = x.Rows / B
	}
	if !valid(h0, B, H) || !valid(c0, B, H) || !valid(cT, B, H) || !valid(x, T*B, In) || !valid(hs, T*B, H) {
		panic(fmt.Sprintf("heed/rnn: %s: in=%d, hidden=%d, B=%d (h0's rows): x is %s, hs %s, cT %s, h0 %s, c0 %s; want x T·B×%d, hs T·B×%d, h0, c0 and cT B×%d",
			call, In, H, B, shape(x), shape(hs), shape(cT), shape(h0), shape(c0), In, H, H))
	}
	checkAll(call, []named{{"hs", span(hs)}, {"cT", span(cT)}},
		[]named{{"x", span(x)}, {"h0", span(h0)}, {"c0", span(c0)}, {"W", span(l.w)}, {"b", l.b}},
		func(i, j int) bool { return i == 1 && j == 2 })
	tp.busy.Enter("rnn.LSTMTape")
	defer tp.busy.Exit()
	tp.grow(T, B, In, H)
	tp.cell, tp.filled = l, true
	n := T * B
	tp.g = grow(tp.g, n*4*H)
	tp.act = grow(tp.act, n*5*H)
	tp.c = grow(tp.c, n*H)
	tp.dc = grow(tp.dc, B*H)
	if T == 0 {
		if B > 0 && !sameSlice(span(cT), span(c0)) {
			copyRows(cT, c0)
		}
		return
	}
	G, A := mat(tp.g, n, 4*H), mat(tp.act, n, 5*H)
	Hp, C := mat(tp.hPrev, n, H), mat(tp.c, n, H)
	copyRows(rowsOf(Hp, 0, B), h0)
	copyRows(rowsOf(C, 0, B), c0)
	wx, wh := colsOf(l.w, 0, In), colsOf(l.w, In, In+H)
	tp.scratch.Gemm(kernels.NoTrans, kernels.Trans, 1, x, wx, 0, G) // zeros if In = 0
	p := &tp.packed[0]
	p.Pack(kernels.Trans, wh)
	for t := range T {
		r0 := t * B
		Gt := rowsOf(G, r0, r0+B)
		tp.scratch.GemmPacked(kernels.NoTrans, 1, rowsOf(Hp, r0, r0+B), p, 1, Gt)
		last := t == T-1
		for b := range B {
			r := r0 + b
			var hOut, cOut []float32
			if last {
				hOut, cOut = hs.Row(r), cT.Row(b)
			} else {
				hOut, cOut = Hp.Row(r+B), C.Row(r+B)
			}
			kernels.LSTMCellTrain(hOut, cOut, A.Row(r), Gt.Row(b), l.b, C.Row(r))
		}
		if !last {
			copyRows(rowsOf(hs, r0, r0+B), rowsOf(Hp, r0+B, r0+2*B))
		}
	}
}

// Backward is the backward through time of the Forward that tp holds, on
// the same cell with its weights unchanged: given the gradients dhs of the
// outputs h_t (T·B × H, in hs's layout) and, unless empty, dhT and dcT of the
// final states (B × H: dhT adds to dhs's last B rows, which are also h_T's),
// it adds the gradients of the loss with respect to the inputs x (to dx,
// T·B × In), the initial states (to dh0 and dc0, B × H) and the parameters
// (to g's W and B). Every gradient is accumulated (+=) into the caller's
// buffers; an empty one (a zero Matrix, a nil g or field) is not wanted and
// not computed; dhs, dhT and dcT empty are zero. x must hold the inputs that
// Forward was given.
//
// Steps t = T…1 each take one kernels.LSTMCellBackward pass per sequence,
// which turns the gradients of h_t and c_t into those of the gate
// pre-activations dG_t (kept, in the room of the pre-activations) and of
// c_{t−1}, and one product for the recurrence, dh_{t−1} = dhs_{t−1} +
// dG_t·W_h (B rows against W_h packed once per call, the sum in its β = 1;
// dh0 += dG_1·W_h). Then, as oneDNN does, the parameters' and the inputs'
// gradients of all steps are each one product over the T·B rows of the
// step-major matrices, read where they are:
//
//	dW[:, :In] += dGᵀ·X      dW[:, In:] += dGᵀ·H_prev      dx += dG·W_x      dB += dGᵀ·1
//
// (H_prev the tape's T·B × H copy of h_0…h_{T−1}; the bias through
// kernels.MatTVecAdd). Every product runs on the calling goroutine.
//
// Accuracy: each product is within Gemm's bound γ_{k+1}·(Σ|terms| + |the
// value it adds to|), k its inner dimension (4H for dh, T·B for dW and dB,
// 4H for dx), and each element-wise pass within LSTMCellBackward's bound;
// the gradients are within these carried through the recurrence together
// with the forward's errors in the saved values (which the tests compute
// step by step beside a float64 evaluation of the gradients, itself checked
// against finite differences of the float64 forward). Special values follow
// IEEE arithmetic through the formulas (a saturated gate passes a zero
// gradient, NaN where it multiplies an infinite one).
//
// It panics, naming the shapes, unless every given matrix has its shape
// above, and if tp holds no Forward of this cell. The gradient buffers must
// not overlap each other, an input (x, dhs, dhT, dcT) or the cell's weights:
// it panics, naming them, if they do. Backward leaves the saved values in tp
// as they are, so it may run again on the same tape (with other output
// gradients). It allocates nothing once tp has grown (by Forward).
func (l *LSTM) Backward(g *LSTMGrads, dx, dh0, dc0 kernels.Matrix, tp *LSTMTape, x, dhs, dhT, dcT kernels.Matrix) {
	const call = "LSTM.Backward"
	H, In := l.Hidden, l.In
	if !tp.filled || tp.cell != l {
		panic("heed/rnn: " + call + ": the tape holds no Forward of this cell")
	}
	T, B := tp.steps, tp.batch
	n := T * B
	var dW kernels.Matrix
	var db []float32
	if g != nil {
		dW, db = g.W, g.B
	}
	if !valid(x, n, In) || !validOrEmpty(dhs, n, H) || !validOrEmpty(dhT, B, H) || !validOrEmpty(dcT, B, H) ||
		!validOrEmpty(dx, n, In) || !validOrEmpty(dh0, B, H) || !validOrEmpty(dc0, B, H) ||
		!validOrEmpty(dW, 4*H, In+H) || db != nil && len(db) != 4*H {
		panic(fmt.Sprintf("heed/rnn: %s: in=%d, hidden=%d, T=%d, B=%d (the tape's): x is %s, dhs %s, dhT %s, dcT %s, dx %s, dh0 %s, dc0 %s, g.W %s, len(g.B)=%d; want x and dx T·B×%d, dhs T·B×%d, dhT, dcT, dh0 and dc0 B×%d, g.W %d×%d, len(g.B)=%d (each gradient and dhs, dhT, dcT may be empty)",
			call, In, H, T, B, shape(x), shape(dhs), shape(dhT), shape(dcT), shape(dx), shape(dh0), shape(dc0), shape(dW), len(db),
			In, H, H, 4*H, In+H, 4*H))
	}
	checkAll(call, []named{{"g.W", span(dW)}, {"g.B", db}, {"dx", span(dx)}, {"dh0", span(dh0)}, {"dc0", span(dc0)}},
		[]named{{"x", span(x)}, {"dhs", span(dhs)}, {"dhT", span(dhT)}, {"dcT", span(dcT)}, {"W", span(l.w)}, {"b", l.b}}, nil)
	tp.busy.Enter("rnn.LSTMTape")
	defer tp.busy.Exit()
	if B == 0 {
		return
	}
	dh, dc := mat(tp.dh, B, H), mat(tp.dc, B, H)
	if T == 0 { // the initial states are the final ones
		if wanted(dh0) && wanted(dhT) {
			addRows(dh0, dhT)
		}
		if wanted(dc0) && wanted(dcT) {
			addRows(dc0, dcT)
		}
		return
	}
	G, A := mat(tp.g, n, 4*H), mat(tp.act, n, 5*H)
	Hp, C := mat(tp.hPrev, n, H), mat(tp.c, n, H)
	wx, wh := colsOf(l.w, 0, In), colsOf(l.w, In, In+H)
	p := &tp.packed[0]
	p.Pack(kernels.NoTrans, wh)
	// The gradient of h_T and c_T.
	setGrad(dh, rowsOf(dhs, n-B, n), dhT)
	setGrad(dc, dcT, kernels.Matrix{})
	for t := T - 1; t >= 0; t-- {
		r0 := t * B
		Gt := rowsOf(G, r0, r0+B)
		for b := range B {
			kernels.LSTMCellBackward(Gt.Row(b), dc.Row(b), A.Row(r0+b), C.Row(r0+b), dh.Row(b), dc.Row(b))
		}
		if t > 0 {
			setGrad(dh, rowsOf(dhs, r0-B, r0), kernels.Matrix{})
			tp.scratch.GemmPacked(kernels.NoTrans, 1, Gt, p, 1, dh)
		} else if wanted(dh0) {
			tp.scratch.GemmPacked(kernels.NoTrans, 1, Gt, p, 1, dh0)
		}
	}
	if wanted(dc0) {
		addRows(dc0, dc)
	}
	if wanted(dx) {
		tp.scratch.Gemm(kernels.NoTrans, kernels.NoTrans, 1, G, wx, 1, dx)
	}
	if wanted(dW) {
		tp.scratch.Gemm(kernels.Trans, kernels.NoTrans, 1, G, x, 1, colsOf(dW, 0, In))
		tp.scratch.Gemm(kernels.Trans, kernels.NoTrans, 1, G, Hp, 1, colsOf(dW, In, In+H))
	}
	if db != nil {
		kernels.MatTVecAdd(db, G, tp.ones)
	}
}

// setGrad sets dst (B × H) to a + b, each a given gradient or, empty, zero:
// copies where one is given, one rounded sum (kernels.Add) where both are.
func setGrad(dst, a, b kernels.Matrix) {
	switch {
	case wanted(a) && wanted(b):
		for r := range dst.Rows {
			kernels.Add(dst.Row(r), a.Row(r), b.Row(r))
		}
	case wanted(a):
		copyRows(dst, a)
	case wanted(b):
		copyRows(dst, b)
	default:
		clear(dst.Data)
	}
}
