package rnn

import (
	"fmt"

	"github.com/heedml/heed/internal/inuse"
	"github.com/heedml/heed/kernels"
)

// GRU is one step of a gated recurrent unit with input size In and hidden
// size Hidden, in PyTorch's convention (gate order r, z, n):
//
//	r  = σ(W_r·[x; h] + bx_r + bh_r)
//	z  = σ(W_z·[x; h] + bx_z + bh_z)
//	n  = tanh(W_nx·x + bx_n + r⊙(W_nh·h + bh_n))
//	h' = (1 − z)⊙n + z⊙h  = n + z⊙(h − n)
//
// W is 3·Hidden × (In+Hidden): rows [0, H) are r, [H, 2H) z, [2H, 3H) n;
// columns [0, In) multiply x and [In, In+H) multiply h (W_nx and W_nh are the
// two column blocks of the n rows, kept apart because r scales only the
// second). bx and bh (3H each) are PyTorch's bias_ih and bias_hh; W's column
// blocks are its weight_ih and weight_hh.
type GRU struct {
	In, Hidden int
	w          kernels.Matrix
	bx, bh     []float32
	xh         []float32  // [x; h]
	gates      []float32  // r, z (2H), then W_nx·x (H)
	nh         []float32  // W_nh·h (H)
	batch      batchWork  // StepBatch's
	busy       inuse.Flag // in race builds: a call is running
}

// NewGRU returns a GRU cell with weights w (3H × (in+H)) and biases bx, bh
// (3H each), which it keeps (not copies). It panics if the shapes disagree.
func NewGRU(in, hidden int, w kernels.Matrix, bx, bh []float32) *GRU {
	if in < 0 || hidden < 1 || w.Rows != 3*hidden || w.Cols != in+hidden || len(bx) != 3*hidden || len(bh) != 3*hidden ||
		(w.Rows > 1 && w.Stride < w.Cols) || len(w.Data) < (w.Rows-1)*w.Stride+w.Cols {
		panic(fmt.Sprintf("heed/rnn: NewGRU: in=%d, hidden=%d: w is %d×%d (stride %d, len %d), len(bx)=%d, len(bh)=%d; want w %d×%d, len(bx)=len(bh)=%d",
			in, hidden, w.Rows, w.Cols, w.Stride, len(w.Data), len(bx), len(bh), 3*hidden, in+hidden, 3*hidden))
	}
	return &GRU{In: in, Hidden: hidden, w: w, bx: bx, bh: bh,
		xh: make([]float32, in+hidden), gates: make([]float32, 3*hidden), nh: make([]float32, hidden)}
}

// Step computes one step: from the input x (In) and the hidden state h
// (Hidden) it writes the new state into hOut (Hidden). hOut may be h (in
// place); it panics, naming the arguments, on any other overlap, and on wrong
// lengths. It allocates nothing.
//
// The products are three kernels.MatVec calls (r and z over [x; h], then
// W_nx·x and W_nh·h apart); the rest is one pass of kernels.GRUCell.
//
// Accuracy: each product row has the error bound of kernels.Dot, the
// nonlinearities are within 2 ULP, and every other operation (the bias
// sums, r⊙(W_nh·h + bh_n), h − n, z⊙(h − n) and the final sum) is one
// float32 operation rounded once on every architecture (none is fused
// into a multiply-add).
func (g *GRU) Step(hOut, x, h []float32) {
	H, In := g.Hidden, g.In
	if len(x) != In || len(h) != H || len(hOut) != H {
		panic(fmt.Sprintf("heed/rnn: GRU.Step: in=%d, hidden=%d but len(x)=%d, len(h)=%d, len(hOut)=%d",
			In, H, len(x), len(h), len(hOut)))
	}
	checkApart("GRU.Step", "hOut", hOut, "x", x)
	checkInPlace("GRU.Step", "hOut", hOut, "h", h)
	g.busy.Enter("rnn.GRU")
	defer g.busy.Exit()
	copy(g.xh, x)
	copy(g.xh[In:], h)
	w := g.w
	s := g.gates
	// r, z over [x; h]; n's two halves apart.
	kernels.MatVec(s[:2*H], kernels.Matrix{Rows: 2 * H, Cols: In + H, Stride: w.Stride, Data: w.Data}, g.xh)
	nRows := w.Data[2*H*w.Stride:]
	kernels.MatVec(s[2*H:], kernels.Matrix{Rows: H, Cols: In, Stride: w.Stride, Data: nRows}, x) // zeros if In = 0
	kernels.MatVec(g.nh, kernels.Matrix{Rows: H, Cols: H, Stride: w.Stride, Data: nRows[In:]}, h)
	kernels.GRUCell(hOut, s, g.nh, g.bx, g.bh, h) // h is read before hOut is written
}
