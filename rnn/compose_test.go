package rnn

import "github.com/heedml/heed/kernels"

// This file keeps the steps as they were composed from whole-vector kernels
// before kernels.LSTMCell and kernels.GRUCell: the reference the fused steps
// must match bit for bit, and the old side of BenchmarkLSTMStep and
// BenchmarkGRUStep.

// StepComposed is LSTM.Step with the gate product followed by eight
// whole-vector kernel calls.
func (l *LSTM) StepComposed(hOut, cOut, x, h, c []float32) {
	H := l.Hidden
	copy(l.xh, x)
	copy(l.xh[l.In:], h)
	g := l.gates
	kernels.MatVec(g, l.w, l.xh)
	kernels.Add(g, g, l.b)
	kernels.Sigmoid(g[:2*H], g[:2*H]) // i, f
	kernels.Tanh(g[2*H:3*H], g[2*H:3*H])
	kernels.Sigmoid(g[3*H:], g[3*H:]) // o
	ig, fg, gg, og := g[:H:H], g[H:2*H:2*H], g[2*H:3*H:3*H], g[3*H:4*H:4*H]
	kernels.Mul(ig, ig, gg)
	kernels.Mul(cOut, fg, c)
	kernels.Add(cOut, cOut, ig)
	kernels.Tanh(fg, cOut)
	kernels.Mul(hOut, og, fg)
}

// StepComposed is GRU.Step with the products followed by eleven whole-vector
// kernel calls.
func (g *GRU) StepComposed(hOut, x, h []float32) {
	H, In := g.Hidden, g.In
	copy(g.xh, x)
	copy(g.xh[In:], h)
	w := g.w
	s := g.gates
	kernels.MatVec(s[:2*H], kernels.Matrix{Rows: 2 * H, Cols: In + H, Stride: w.Stride, Data: w.Data}, g.xh)
	nRows := w.Data[2*H*w.Stride:]
	kernels.MatVec(s[2*H:], kernels.Matrix{Rows: H, Cols: In, Stride: w.Stride, Data: nRows}, x)
	kernels.MatVec(g.nh, kernels.Matrix{Rows: H, Cols: H, Stride: w.Stride, Data: nRows[In:]}, h)
	kernels.Add(s, s, g.bx)
	kernels.Add(s[:2*H], s[:2*H], g.bh[:2*H])
	kernels.Sigmoid(s[:2*H], s[:2*H])
	r, z, n := s[:H:H], s[H:2*H:2*H], s[2*H:3*H:3*H]
	nh, bhn := g.nh[:H:H], g.bh[2*H:3*H:3*H]
	kernels.Add(nh, nh, bhn)
	kernels.Mul(nh, r, nh)
	kernels.Add(n, n, nh)
	kernels.Tanh(n, n)
	kernels.Sub(nh, h, n)
	kernels.Mul(nh, z, nh)
	kernels.Add(hOut, n, nh)
}
