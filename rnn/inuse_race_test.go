//go:build race

package rnn

import (
	"testing"

	"github.com/heedml/heed/internal/inuse"
	"github.com/heedml/heed/kernels"
)

// TestInUse checks, in race builds, that a step of a cell that another call
// holds panics with a message naming the cell's type.
func TestInUse(t *testing.T) {
	const in, H = 3, 4
	l := NewLSTM(in, H, kernels.Matrix{Rows: 4 * H, Cols: in + H, Stride: in + H, Data: make([]float32, 4*H*(in+H))}, make([]float32, 4*H))
	g := NewGRU(in, H, kernels.Matrix{Rows: 3 * H, Cols: in + H, Stride: in + H, Data: make([]float32, 3*H*(in+H))}, make([]float32, 3*H), make([]float32, 3*H))
	x, h, c := make([]float32, in), make([]float32, H), make([]float32, H)
	mat := func(s []float32, cols int) kernels.Matrix {
		return kernels.Matrix{Rows: 1, Cols: cols, Stride: cols, Data: s}
	}
	for _, tc := range []struct {
		name string
		flag *inuse.Flag
		call func()
	}{
		{"rnn.LSTM", &l.busy, func() { l.Step(h, c, x, h, c) }},
		{"rnn.LSTM", &l.busy, func() { l.StepBatch(mat(h, H), mat(c, H), mat(x, in), mat(h, H), mat(c, H)) }},
		{"rnn.GRU", &g.busy, func() { g.Step(h, x, h) }},
		{"rnn.GRU", &g.busy, func() { g.StepBatch(mat(h, H), mat(x, in), mat(h, H)) }},
	} {
		tc.flag.Enter("test")
		mustPanic(t, inuse.Message(tc.name), tc.call)
		tc.flag.Exit()
		tc.call()
	}
}

// TestInUseTape checks, in race builds, that a Forward or Backward on a
// tape that another call holds panics with a message naming the tape's
// type.
func TestInUseTape(t *testing.T) {
	const in, H, B, T = 3, 4, 2, 3
	m := func(r, c int) kernels.Matrix {
		return kernels.Matrix{Rows: r, Cols: c, Stride: c, Data: make([]float32, r*c)}
	}
	l := NewLSTM(in, H, m(4*H, in+H), make([]float32, 4*H))
	g := NewGRU(in, H, m(3*H, in+H), make([]float32, 3*H), make([]float32, 3*H))
	var lt LSTMTape
	var gt GRUTape
	x, hs, h0, c0, cT := m(T*B, in), m(T*B, H), m(B, H), m(B, H), m(B, H)
	l.Forward(&lt, hs, cT, x, h0, c0)
	g.Forward(&gt, hs, x, h0)
	none := kernels.Matrix{}
	for _, tc := range []struct {
		name string
		flag *inuse.Flag
		call func()
	}{
		{"rnn.LSTMTape", &lt.busy, func() { l.Forward(&lt, hs, cT, x, h0, c0) }},
		{"rnn.LSTMTape", &lt.busy, func() { l.Backward(nil, none, h0, none, &lt, x, hs, none, none) }},
		{"rnn.GRUTape", &gt.busy, func() { g.Forward(&gt, hs, x, h0) }},
		{"rnn.GRUTape", &gt.busy, func() { g.Backward(nil, none, h0, &gt, x, hs, none) }},
	} {
		tc.flag.Enter("test")
		mustPanic(t, inuse.Message(tc.name), tc.call)
		tc.flag.Exit()
		tc.call()
	}
}
