package rnn

import (
	"testing"

	"github.com/heedml/heed/kernels"
)

// TestOverlapPanics checks that the steps panic, naming the arguments, when
// an output overlaps another argument other than its own input exactly, and
// run when each output is its input (in place).
func TestOverlapPanics(t *testing.T) {
	const in, H = 3, 4
	l := NewLSTM(in, H, kernels.Matrix{Rows: 4 * H, Cols: in + H, Stride: in + H, Data: make([]float32, 4*H*(in+H))}, make([]float32, 4*H))
	g := NewGRU(in, H, kernels.Matrix{Rows: 3 * H, Cols: in + H, Stride: in + H, Data: make([]float32, 3*H*(in+H))}, make([]float32, 3*H), make([]float32, 3*H))
	buf := make([]float32, 32)
	x, h, c := make([]float32, in), make([]float32, H), make([]float32, H)
	mat := func(s []float32, cols int) kernels.Matrix {
		return kernels.Matrix{Rows: 1, Cols: cols, Stride: cols, Data: s}
	}
	for _, tc := range []struct {
		want string
		f    func()
	}{
		{"heed/rnn: LSTM.Step: hOut overlaps cOut", func() { l.Step(buf[:4], buf[2:6], x, h, c) }},
		{"heed/rnn: LSTM.Step: hOut overlaps x", func() { l.Step(buf[:4], c, buf[3:6], h, make([]float32, H)) }},
		{"heed/rnn: LSTM.Step: cOut overlaps h", func() { l.Step(make([]float32, H), buf[:4], x, buf[1:5], c) }},
		{"heed/rnn: LSTM.Step: hOut overlaps h", func() { l.Step(buf[:4], c, x, buf[1:5], make([]float32, H)) }},
		{"heed/rnn: GRU.Step: hOut overlaps x", func() { g.Step(buf[:4], buf[3:6], h) }},
		{"heed/rnn: GRU.Step: hOut overlaps h", func() { g.Step(buf[:4], x, buf[2:6]) }},
		{"heed/rnn: LSTM.StepBatch: hOut overlaps cOut", func() {
			l.StepBatch(mat(buf[:4], H), mat(buf[3:7], H), mat(x, in), mat(h, H), mat(c, H))
		}},
		{"heed/rnn: GRU.StepBatch: hOut overlaps h", func() { g.StepBatch(mat(buf[:4], H), mat(x, in), mat(buf[1:5], H)) }},
	} {
		mustPanic(t, tc.want, tc.f)
	}
	l.Step(h, c, x, h, c) // in place
	g.Step(h, x, h)
	l.StepBatch(mat(h, H), mat(c, H), mat(x, in), mat(h, H), mat(c, H))
	g.StepBatch(mat(h, H), mat(x, in), mat(h, H))
}
