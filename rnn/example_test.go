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
