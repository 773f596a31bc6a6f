package attention_test

import (
	"fmt"

	"github.com/heedml/heed/attention"
	"github.com/heedml/heed/kernels"
)

// mat returns a rows×cols matrix with the given row-major data.
func mat(rows, cols int, data ...float32) kernels.Matrix {
	return kernels.Matrix{Rows: rows, Cols: cols, Stride: cols, Data: data}
}

// A Bahdanau decoder: the encoder states are prepared once per sequence
// (K = H̄W₂ᵀ is cached), then each decoder step costs q = W₁h and one fused
// score pass, with no allocation.
func ExampleAdditive() {
	encoder := mat(3, 2, // S=3 encoder states of length 2
		1, 0,
		0, 1,
		1, 1)
	w1 := mat(2, 2, 0.5, 0, 0, 0.5) // d_a×d_q
	w2 := mat(2, 2, 1, 0, 0, 1)     // d_a×d_k
	v := []float32{1, -1}
	mem := attention.NewMemory(attention.Additive(w1, w2, v), encoder, encoder)

	weights, context := make([]float32, 3), make([]float32, 2)
	for _, h := range [][]float32{{1, 0}, {0, 2}} { // two decoder states
		mem.Attend(weights, context, h)
		fmt.Printf("α = %.3f  c = %.3f\n", weights, context)
	}
	// Output:
	// α = [0.566 0.170 0.264]  c = [0.830 0.434]
	// α = [0.455 0.173 0.372]  c = [0.827 0.545]
}

// A Luong step: dot scores against the encoder states, the context, then the
// attentional state h̃ = tanh(W_c[c; h]).
func ExampleDot() {
	encoder := mat(3, 2,
		1, 0,
		0, 1,
		1, 1)
	mem := attention.NewMemory(attention.Dot(), encoder, encoder)
	wc := mat(2, 4, // d_out×(d_c+d_h)
		1, 0, 1, 0,
		0, 1, 0, -1)
	state := attention.NewAttentional(wc, 2)

	h := []float32{2, 0}
	weights, context, hTilde := make([]float32, 3), make([]float32, 2), make([]float32, 2)
	mem.Attend(weights, context, h)
	state.Apply(hTilde, context, h)
	fmt.Printf("α = %.3f\nc = %.3f\nh̃ = %.3f\n", weights, context, hTilde)
	// Output:
	// α = [0.468 0.063 0.468]
	// c = [0.937 0.532]
	// h̃ = [0.994 0.487]
}

// Padding and masks: key 1 is masked out and key 3 is padding.
func ExampleMemory_SetMask() {
	keys := mat(4, 1, 1, 2, 3, 4)
	mem := attention.NewMemory(attention.ScaledDot(), keys, keys)
	mem.SetValid(3)
	mem.SetMask([]bool{true, false, true, true})
	weights, context := make([]float32, 4), make([]float32, 1)
	mem.Attend(weights, context, []float32{1})
	fmt.Printf("α = %.3f  c = %.3f\n", weights, context)
	mem.SetMask([]bool{false, false, false, true}) // nothing valid is attended
	mem.Attend(weights, context, []float32{1})
	fmt.Printf("α = %.3f  c = %.3f\n", weights, context)
	// Output:
	// α = [0.119 0.000 0.881 0.000]  c = [2.762]
	// α = [0.000 0.000 0.000 0.000]  c = [0.000]
}

// Teacher forcing: every decoder state of a sentence attends to the encoder
// states in one call, which reads each key and value once for several queries.
func ExampleMemory_AttendMany() {
	encoder := mat(3, 2,
		1, 0,
		0, 1,
		1, 1)
	mem := attention.NewMemory(attention.Dot(), encoder, encoder)
	queries := mat(2, 2, // two decoder states
		2, 0,
		0, 2)
	weights, context := mat(2, 3, make([]float32, 6)...), mat(2, 2, make([]float32, 4)...)
	mem.AttendMany(weights, context, queries)
	for b := range 2 {
		fmt.Printf("α = %.3f  c = %.3f\n", weights.Row(b), context.Row(b))
	}
	// Output:
	// α = [0.468 0.063 0.468]  c = [0.937 0.532]
	// α = [0.063 0.468 0.468]  c = [0.532 0.937]
}

// Causal self-attention with two heads over a sequence of three positions:
// head 0 uses columns 0–1 of q, k and v, head 1 columns 2–3.
func ExampleMultiHead() {
	x := mat(3, 4,
		1, 0, 0, 1,
		0, 1, 1, 0,
		1, 1, 0, 0)
	out := mat(3, 4, make([]float32, 12)...)
	var ws attention.Workspace
	attention.MultiHead(out, x, x, x, 2, attention.Causal, &ws)
	for t := range 3 {
		fmt.Printf("%.3f\n", out.Row(t))
	}
	// Output:
	// [1.000 0.000 0.000 1.000]
	// [0.330 0.670 0.670 0.330]
	// [0.752 0.752 0.333 0.333]
}
