package rnn

import (
	"fmt"

	"github.com/heedml/heed/internal/inuse"
	"github.com/heedml/heed/kernels"
)

// GRUGrads is where [GRU.Backward] adds the gradients of a GRU's parameters:
// W (3H × (In+H), the layout of the cell's weights, any stride), Bx and Bh
// (3H each, of bias_ih and bias_hh). Backward accumulates (+=) into them, so
// a framework zeroes them once per training step. A field left empty (a zero
// Matrix, a nil slice) is not wanted: it is neither computed nor written.
type GRUGrads struct {
	W      kernels.Matrix
	Bx, Bh []float32
}

// GRUTape is what [GRU.Forward] keeps of a sequence for [GRU.Backward]: for
// each of the T steps of the B sequences, r, z, n and q = W_nh·h_{t−1} + bh_n
// (4H floats per sequence, kernels.GRUCellTrain's act) and h_{t−1} (H), and
// the pre-activations (3H), whose room Backward reuses for the gradient of
// W_x·x + bx, beside that of W_h·h + bh (3H); 11H floats per sequence and
// step in all, plus the products' scratch and the recurrent weights packed
// once per call. The zero value is ready to use; it grows to the largest
// sequence it has held, and a later call with at most as many steps and
// sequences allocates nothing. A tape holds one Forward at a time (the
// last); it is not safe for concurrent use.
type GRUTape struct {
	seqWork
	cell *GRU
	g    []float32 // T·B × 3H: the pre-activations; after Backward, dGx
	act  []float32 // T·B × 4H: r, z, n, q
	dgh  []float32 // T·B × 3H: dGh
	busy inuse.Flag
}

// Steps returns the steps T and the sequences B of the Forward the tape
// holds (0, 0 before any).
func (tp *GRUTape) Steps() (T, B int) { return tp.steps, tp.batch }

// Forward runs the cell over T steps of B sequences at once and keeps in tp
// what Backward needs. As [LSTM.Forward], x is T·B × In and hs T·B × H,
// step-major (row (t−1)·B + b holds x_t and gets h_t of sequence b); from the
// initial state h0 (B × H: B is h0.Rows, T = x.Rows/B) it computes Step's
// recurrence
//
//	r = σ(W_r·[x_t; h] + bx_r + bh_r),  z = σ(W_z·[x_t; h] + bx_z + bh_z)
//	n = tanh(W_nx·x_t + bx_n + r⊙(W_nh·h + bh_n)),  h_t = n + z⊙(h − n)   (h = h_{t−1})
//
// h_T is hs's last B rows.
//
// The input half of the products, X·W_xᵀ for all T·B rows, is one matrix
// product; each step then adds h_{t−1}·W_hᵀ to the r and z columns and forms
// W_nh·h_{t−1} with two products against the packed W_h (packed once per
// call), and one kernels.GRUCellTrain pass per sequence does the rest. Every
// product runs on the calling goroutine.
//
// Accuracy: the r and z pre-activations are within γ_{In+H+2}·Σ|terms| of
// their products (before the biases), W_nx·x_t within γ_{In+1}·Σ|terms| and
// W_nh·h_{t−1} within γ_{H+1}·Σ|terms|, on the computed h_{t−1}; the rest is
// GRUCell's pass (the same bits, on every ISA). The error of the sequence is
// these bounds carried through the recurrence, which the tests compute step
// by step beside a float64 evaluation. The bits depend on the ISA only
// through the products' summation order.
//
// It panics, naming the shapes, unless x is T·B × In and hs T·B × H for some
// T ≥ 0 and h0 is B × H (any strides), and, naming them, if hs overlaps
// another argument or the cell's weights. The caller keeps x unchanged until
// Backward; hs and h0 may change (the tape holds copies). As LSTM.Forward's,
// Forward and Backward read the cell's weights anew at each call (an
// optimizer may update them between training steps), and Forward reads only
// the cell's weights and biases and writes only tp and hs: goroutines may
// share a cell, each with its own tape. It allocates nothing once tp has
// grown.
func (g *GRU) Forward(tp *GRUTape, hs, x, h0 kernels.Matrix) {
	const call = "GRU.Forward"
	B, H, In := h0.Rows, g.Hidden, g.In
	T := 0
	if B > 0 {
		T = x.Rows / B
	}
	if !valid(h0, B, H) || !valid(x, T*B, In) || !valid(hs, T*B, H) {
		panic(fmt.Sprintf("heed/rnn: %s: in=%d, hidden=%d, B=%d (h0's rows): x is %s, hs %s, h0 %s; want x T·B×%d, hs T·B×%d, h0 B×%d",
			call, In, H, B, shape(x), shape(hs), shape(h0), In, H, H))
	}
	checkAll(call, []named{{"hs", span(hs)}},
		[]named{{"x", span(x)}, {"h0", span(h0)}, {"W", span(g.w)}, {"bx", g.bx}, {"bh", g.bh}}, nil)
	tp.busy.Enter("rnn.GRUTape")
	defer tp.busy.Exit()
	tp.grow(T, B, In, H)
	tp.cell, tp.filled = g, true
	n := T * B
	tp.g = grow(tp.g, n*3*H)
	tp.act = grow(tp.act, n*4*H)
	tp.dgh = grow(tp.dgh, n*3*H)
	tp.nh = grow(tp.nh, B*H)
	if T == 0 {
		return
	}
	G, A := mat(tp.g, n, 3*H), mat(tp.act, n, 4*H)
	Hp, NH := mat(tp.hPrev, n, H), mat(tp.nh, B, H)
	copyRows(rowsOf(Hp, 0, B), h0)
	wx, wh := colsOf(g.w, 0, In), colsOf(g.w, In, In+H)
	tp.scratch.Gemm(kernels.NoTrans, kernels.Trans, 1, x, wx, 0, G) // zeros if In = 0
	prz, pn := &tp.packed[0], &tp.packed[1]
	prz.Pack(kernels.Trans, rowsOf(wh, 0, 2*H))
	pn.Pack(kernels.Trans, rowsOf(wh, 2*H, 3*H))
	for t := range T {
		r0 := t * B
		Gt, Ht := rowsOf(G, r0, r0+B), rowsOf(Hp, r0, r0+B)
		tp.scratch.GemmPacked(kernels.NoTrans, 1, Ht, prz, 1, colsOf(Gt, 0, 2*H))
		tp.scratch.GemmPacked(kernels.NoTrans, 1, Ht, pn, 0, NH)
		last := t == T-1
		for b := range B {
			r := r0 + b
			hOut := hs.Row(r)
			if !last {
				hOut = Hp.Row(r + B)
			}
			kernels.GRUCellTrain(hOut, A.Row(r), Gt.Row(b), NH.Row(b), g.bx, g.bh, Hp.Row(r))
		}
		if !last {
			copyRows(rowsOf(hs, r0, r0+B), rowsOf(Hp, r0+B, r0+2*B))
		}
	}
}

// Backward is the backward through time of the Forward that tp holds, on
// the same cell with its weights unchanged, as [LSTM.Backward]: given the
// gradients dhs of the outputs (T·B × H) and, unless empty, dhT of the final
// state (B × H, added to dhs's last B rows), it adds the gradients of the
// loss with respect to x (to dx, T·B × In), h0 (to dh0, B × H) and the
// parameters (to g's W, Bx and Bh). Every gradient is accumulated (+=); an
// empty one is not wanted; dhs and dhT empty are zero. x must hold the
// inputs Forward was given.
//
// Steps t = T…1 each take one kernels.GRUCellBackward pass per sequence,
// which gives the gradients dGx_t of W_x·x_t + bx and dGh_t of W_h·h_{t−1} +
// bh and the direct part dh·z of h_{t−1}'s, and one product for the
// recurrence, dh_{t−1} = (dh_t·z + dhs_{t−1}) + dGh_t·W_h (B rows against
// W_h packed once per call; dh0 += dh_1·z, then += dGh_1·W_h). Then the
// parameters' and the inputs' gradients of all steps are each one product
// over the T·B rows of the step-major matrices, read where they are:
//
//	dW[:, :In] += dGxᵀ·X   dW[:, In:] += dGhᵀ·H_prev   dx += dGx·W_x   dBx += dGxᵀ·1   dBh += dGhᵀ·1
//
// Accuracy, special values and the rules on the tape are LSTM.Backward's,
// with kernels.GRUCellBackward's bound for the element-wise passes and inner
// dimensions 3H (dh, dx) and T·B (dW, dBx, dBh).
//
// It panics, naming the shapes, unless every given matrix has its shape
// above, and if tp holds no Forward of this cell; and, naming them, if the
// gradient buffers overlap each other, an input (x, dhs, dhT) or the cell's
// weights. It may run again on the same tape. It allocates nothing once tp
// has grown (by Forward).
func (g *GRU) Backward(gr *GRUGrads, dx, dh0 kernels.Matrix, tp *GRUTape, x, dhs, dhT kernels.Matrix) {
	const call = "GRU.Backward"
	H, In := g.Hidden, g.In
	if !tp.filled || tp.cell != g {
		panic("heed/rnn: " + call + ": the tape holds no Forward of this cell")
	}
	T, B := tp.steps, tp.batch
	n := T * B
	var dW kernels.Matrix
	var dbx, dbh []float32
	if gr != nil {
		dW, dbx, dbh = gr.W, gr.Bx, gr.Bh
	}
	if !valid(x, n, In) || !validOrEmpty(dhs, n, H) || !validOrEmpty(dhT, B, H) ||
		!validOrEmpty(dx, n, In) || !validOrEmpty(dh0, B, H) || !validOrEmpty(dW, 3*H, In+H) ||
		dbx != nil && len(dbx) != 3*H || dbh != nil && len(dbh) != 3*H {
		panic(fmt.Sprintf("heed/rnn: %s: in=%d, hidden=%d, T=%d, B=%d (the tape's): x is %s, dhs %s, dhT %s, dx %s, dh0 %s, g.W %s, len(g.Bx)=%d, len(g.Bh)=%d; want x and dx T·B×%d, dhs T·B×%d, dhT and dh0 B×%d, g.W %d×%d, len(g.Bx)=len(g.Bh)=%d (each gradient and dhs, dhT may be empty)",
			call, In, H, T, B, shape(x), shape(dhs), shape(dhT), shape(dx), shape(dh0), shape(dW), len(dbx), len(dbh),
			In, H, H, 3*H, In+H, 3*H))
	}
	checkAll(call, []named{{"g.W", span(dW)}, {"g.Bx", dbx}, {"g.Bh", dbh}, {"dx", span(dx)}, {"dh0", span(dh0)}},
		[]named{{"x", span(x)}, {"dhs", span(dhs)}, {"dhT", span(dhT)}, {"W", span(g.w)}, {"bx", g.bx}, {"bh", g.bh}}, nil)
	tp.busy.Enter("rnn.GRUTape")
	defer tp.busy.Exit()
	if B == 0 {
		return
	}
	dh := mat(tp.dh, B, H)
	if T == 0 {
		if wanted(dh0) && wanted(dhT) {
			addRows(dh0, dhT)
		}
		return
	}
	DGx, DGh, A := mat(tp.g, n, 3*H), mat(tp.dgh, n, 3*H), mat(tp.act, n, 4*H)
	Hp := mat(tp.hPrev, n, H)
	wx, wh := colsOf(g.w, 0, In), colsOf(g.w, In, In+H)
	p := &tp.packed[0]
	p.Pack(kernels.NoTrans, wh)
	setGrad(dh, rowsOf(dhs, n-B, n), dhT)
	for t := T - 1; t >= 0; t-- {
		r0 := t * B
		Xt, Ht := rowsOf(DGx, r0, r0+B), rowsOf(DGh, r0, r0+B)
		for b := range B {
			d := dh.Row(b)
			kernels.GRUCellBackward(Xt.Row(b), Ht.Row(b), d, A.Row(r0+b), Hp.Row(r0+b), d)
		}
		switch {
		case t > 0:
			if prev := rowsOf(dhs, r0-B, r0); wanted(prev) {
				addRows(dh, prev)
			}
			tp.scratch.GemmPacked(kernels.NoTrans, 1, Ht, p, 1, dh)
		case wanted(dh0):
			addRows(dh0, dh)
			tp.scratch.GemmPacked(kernels.NoTrans, 1, Ht, p, 1, dh0)
		}
	}
	if wanted(dx) {
		tp.scratch.Gemm(kernels.NoTrans, kernels.NoTrans, 1, DGx, wx, 1, dx)
	}
	if wanted(dW) {
		tp.scratch.Gemm(kernels.Trans, kernels.NoTrans, 1, DGx, x, 1, colsOf(dW, 0, In))
		tp.scratch.Gemm(kernels.Trans, kernels.NoTrans, 1, DGh, Hp, 1, colsOf(dW, In, In+H))
	}
	if dbx != nil {
		kernels.MatTVecAdd(dbx, DGx, tp.ones)
	}
	if dbh != nil {
		kernels.MatTVecAdd(dbh, DGh, tp.ones)
	}
}
