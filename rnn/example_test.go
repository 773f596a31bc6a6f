package rnn_test

import (
	"fmt"

	"github.com/heedml/heed/kernels"
	"github.com/heedml/heed/rnn"
)

// An LSTM cell of input size 2 and hidden size 1 (W is 4×3, gate rows i, f,
// g, o) run for two steps over a sequence, its states updated in place; the
// output is what the equations give in float64 (to 4 places).
func ExampleLSTM() {
	w := kernels.Matrix{Rows: 4, Cols: 3, Stride: 3, Data: []float32{
		0.5, -0.5, 0.1, // i
		0.2, 0.3, 0.4, // f
		1.0, 1.0, -1.0, // g
		0.3, -0.2, 0.5, // o
	}}
	cell := rnn.NewLSTM(2, 1, w, make([]float32, 4))
	h, c := []float32{0}, []float32{0}
	for _, x := range [][]float32{{1, 0}, {0, 1}} {
		cell.Step(h, c, x, h, c)
		fmt.Printf("h=%.4f c=%.4f\n", h[0], c[0])
	}
	// Output:
	// h=0.2536 c=0.4741
	// h=0.2326 c=0.5267
}

// StepBatch advances several sequences at once, one row each: here the two
// steps of ExampleLSTM's sequence (row 0) and another sequence beside it
// (row 1, inputs (−1, 2) then (0.5, 0.5)); the output is what the equations
// give in float64 (to 4 places).
func ExampleLSTM_StepBatch() {
	w := kernels.Matrix{Rows: 4, Cols: 3, Stride: 3, Data: []float32{
		0.5, -0.5, 0.1, // i
		0.2, 0.3, 0.4, // f
		1.0, 1.0, -1.0, // g
		0.3, -0.2, 0.5, // o
	}}
	cell := rnn.NewLSTM(2, 1, w, make([]float32, 4))
	h := kernels.Matrix{Rows: 2, Cols: 1, Stride: 1, Data: make([]float32, 2)}
	c := kernels.Matrix{Rows: 2, Cols: 1, Stride: 1, Data: make([]float32, 2)}
	for _, x := range [][]float32{{1, 0, -1, 2}, {0, 1, 0.5, 0.5}} {
		cell.StepBatch(h, c, kernels.Matrix{Rows: 2, Cols: 2, Stride: 2, Data: x}, h, c)
		fmt.Printf("h=[%.4f %.4f] c=[%.4f %.4f]\n", h.Data[0], h.Data[1], c.Data[0], c.Data[1])
	}
	// Output:
	// h=[0.2536 0.0458] c=[0.4741 0.1389]
	// h=[0.2326 0.2188] c=[0.5267 0.4504]
}

// Training ExampleLSTM's cell over its sequence: Forward keeps the tape,
// Backward adds the gradients of the loss ½(h_T − 0.8)² (dhT = h_T − 0.8,
// no gradient on the other outputs) to zeroed buffers, and a plain
// gradient-descent step updates, in place, the weights and the bias the
// cell holds (Forward and Backward read them anew at each call).
func ExampleLSTM_Backward() {
	w := kernels.Matrix{Rows: 4, Cols: 3, Stride: 3, Data: []float32{
		0.5, -0.5, 0.1, // i
		0.2, 0.3, 0.4, // f
		1.0, 1.0, -1.0, // g
		0.3, -0.2, 0.5, // o
	}}
	b := make([]float32, 4)
	cell := rnn.NewLSTM(2, 1, w, b)
	const T, B = 2, 1
	x := kernels.Matrix{Rows: T * B, Cols: 2, Stride: 2, Data: []float32{1, 0, 0, 1}}
	zero := func(rows, cols int) kernels.Matrix {
		return kernels.Matrix{Rows: rows, Cols: cols, Stride: cols, Data: make([]float32, rows*cols)}
	}
	hs, cT, h0, c0, dhT := zero(T*B, 1), zero(B, 1), zero(B, 1), zero(B, 1), zero(B, 1)
	grads := rnn.LSTMGrads{W: zero(4, 3), B: make([]float32, 4)}
	var tape rnn.LSTMTape
	for step := range 41 {
		cell.Forward(&tape, hs, cT, x, h0, c0)
		hT := hs.Data[T-1]
		if step%10 == 0 {
			fmt.Printf("step %d: h_T=%.3f loss=%.4f\n", step, hT, 0.5*(hT-0.8)*(hT-0.8))
		}
		dhT.Data[0] = hT - 0.8
		clear(grads.W.Data)
		clear(grads.B)
		cell.Backward(&grads, kernels.Matrix{}, kernels.Matrix{}, kernels.Matrix{}, &tape, x, kernels.Matrix{}, dhT, kernels.Matrix{})
		kernels.AddScaled(w.Data, -1, grads.W.Data, w.Data) // w −= dW
		kernels.AddScaled(b, -1, grads.B, b)
	}
	// Output:
	// step 0: h_T=0.233 loss=0.1610
	// step 10: h_T=0.579 loss=0.0245
	// step 20: h_T=0.686 loss=0.0065
	// step 30: h_T=0.729 loss=0.0025
	// step 40: h_T=0.751 loss=0.0012
}
