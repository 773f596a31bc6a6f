package rnn

import (
	"fmt"

	"github.com/heedml/heed/internal/inuse"
	"github.com/heedml/heed/kernels"
)

// LSTM is one step of a long short-term memory cell with input size In and
// hidden size Hidden, in PyTorch's convention (gate order i, f, g, o):
//
//	[i; f; g; o] = W·[x; h] + b
//	i = σ(i), f = σ(f), g = tanh(g), o = σ(o)
//	c' = f⊙c + i⊙g
//	h' = o⊙tanh(c')
//
// W is 4·Hidden × (In+Hidden): rows [0, H) are the input gate i, [H, 2H) the
// forget gate f, [2H, 3H) the cell candidate g, [3H, 4H) the output gate o;
// columns [0, In) multiply x and [In, In+H) multiply h. PyTorch's weight_ih
// and weight_hh are its column blocks, and b is bias_ih + bias_hh.
type LSTM struct {
	In, Hidden int
	w          kernels.Matrix
	b          []float32
	xh         []float32  // [x; h]
	gates      []float32  // 4H
	batch      batchWork  // StepBatch's
	busy       inuse.Flag // in race builds: a call is running
}

// NewLSTM returns an LSTM cell with weights w (4H × (in+H)) and bias b (4H),
// which it keeps (not copies): they must not change while the cell steps. It
// panics if the shapes disagree.
func NewLSTM(in, hidden int, w kernels.Matrix, b []float32) *LSTM {
	if in < 0 || hidden < 1 || w.Rows != 4*hidden || w.Cols != in+hidden || len(b) != 4*hidden ||
		(w.Rows > 1 && w.Stride < w.Cols) || len(w.Data) < (w.Rows-1)*w.Stride+w.Cols {
		panic(fmt.Sprintf("heed/rnn: NewLSTM: in=%d, hidden=%d: w is %d×%d (stride %d, len %d), len(b)=%d; want w %d×%d, len(b)=%d",
			in, hidden, w.Rows, w.Cols, w.Stride, len(w.Data), len(b), 4*hidden, in+hidden, 4*hidden))
	}
	return &LSTM{In: in, Hidden: hidden, w: w, b: b,
		xh: make([]float32, in+hidden), gates: make([]float32, 4*hidden)}
}

// Step computes one step: from the input x (In), the hidden state h and the
// cell state c (Hidden each) it writes the new states into hOut and cOut
// (Hidden each). hOut may be h and cOut may be c (in place); it panics, naming
// the arguments, on any other overlap, and on wrong lengths. It allocates
// nothing.
//
// The gates come from one kernels.MatVec over [x; h], the rest from one pass
// of kernels.LSTMCell (bias, nonlinearities and state update).
//
// Accuracy: each gate pre-activation has the error bound of kernels.Dot over
// In+Hidden+1 terms (the bias added last), the nonlinearities are within
// 2 ULP, and the update rounds each product and sum once (never fused into a
// multiply-add), on every architecture.
func (l *LSTM) Step(hOut, cOut, x, h, c []float32) {
	H := l.Hidden
	if len(x) != l.In || len(h) != H || len(c) != H || len(hOut) != H || len(cOut) != H {
		panic(fmt.Sprintf("heed/rnn: LSTM.Step: in=%d, hidden=%d but len(x)=%d, len(h)=%d, len(c)=%d, len(hOut)=%d, len(cOut)=%d",
			l.In, H, len(x), len(h), len(c), len(hOut), len(cOut)))
	}
	const call = "LSTM.Step"
	checkApart(call, "hOut", hOut, "cOut", cOut)
	checkApart(call, "hOut", hOut, "x", x)
	checkApart(call, "hOut", hOut, "c", c)
	checkApart(call, "cOut", cOut, "x", x)
	checkApart(call, "cOut", cOut, "h", h)
	checkInPlace(call, "hOut", hOut, "h", h)
	checkInPlace(call, "cOut", cOut, "c", c)
	l.busy.Enter("rnn.LSTM")
	defer l.busy.Exit()
	copy(l.xh, x)
	copy(l.xh[l.In:], h)
	kernels.MatVec(l.gates, l.w, l.xh)
	kernels.LSTMCell(hOut, cOut, l.gates, l.b, c) // h is read (into xh) before hOut is written
}
