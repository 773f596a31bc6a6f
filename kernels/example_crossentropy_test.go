package kernels_test

import (
	"fmt"
	"math"

	"github.com/heedml/heed/kernels"
)

// The output layer of a language model in training, a few steps of it: the
// logits L = H·Wᵀ + b of n hidden states over a vocabulary by Gemm, the
// loss fused with its gradient dL (written over L, in place), then the
// projection's gradients by Gemm, dW = dLᵀ·H and dH = dL·W, and db = dLᵀ·1
// by MatTVec, and an Adam step on W and b. A row with target −100 is padding:
// its gradient is zero and it adds no loss.
func ExampleSoftmaxCrossEntropyRows() {
	const n, d, vocab = 4, 8, 50 // tokens, hidden size, vocabulary
	mat := func(r, c int, f func(i, j int) float64) kernels.Matrix {
		m := kernels.Matrix{Rows: r, Cols: c, Stride: c, Data: make([]float32, r*c)}
		for i := range r {
			for j := range c {
				m.Data[i*c+j] = float32(f(i, j))
			}
		}
		return m
	}
	h := mat(n, d, func(i, j int) float64 { return math.Sin(float64(3*i + j)) })
	w := mat(vocab, d, func(i, j int) float64 { return 0.1 * math.Cos(float64(7*i+j)) })
	b := make([]float32, vocab)
	targets := []int32{3, 17, -100, 42}

	zeros := func(int, int) float64 { return 0 }
	logits := mat(n, vocab, zeros)
	dW, mW, vW := mat(vocab, d, zeros), make([]float32, vocab*d), make([]float32, vocab*d)
	dH := mat(n, d, zeros)
	db, mb, vb := make([]float32, vocab), make([]float32, vocab), make([]float32, vocab)
	ones := []float32{1, 1, 1, 1}
	adam := kernels.AdamConfig{LR: 0.05, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
	for step := 1; step <= 5; step++ {
		for i := range n {
			copy(logits.Row(i), b)
		}
		kernels.Gemm(kernels.NoTrans, kernels.Trans, 1, h, w, 1, logits) // L = H·Wᵀ + b
		// The mean loss's gradient (Scale 0: 1/counted), in place.
		loss, counted := kernels.SoftmaxCrossEntropyRows(logits, logits, targets, kernels.CrossEntropyOptions{Ignore: -100})
		dL := logits
		kernels.Gemm(kernels.Trans, kernels.NoTrans, 1, dL, h, 0, dW)   // dW = dLᵀ·H
		kernels.Gemm(kernels.NoTrans, kernels.NoTrans, 1, dL, w, 0, dH) // dH = dL·W, for the layer below
		kernels.MatTVec(db, dL, ones)                                   // db = Σᵢ dL[i]
		kernels.AdamStep(w.Data, dW.Data, mW, vW, adam, step)
		kernels.AdamStep(b, db, mb, vb, adam, step)
		fmt.Printf("step %d: mean loss %.2f over %d tokens\n", step, loss/float32(counted), counted)
	}
	zero := true
	for _, g := range logits.Row(2) {
		zero = zero && g == 0
	}
	fmt.Println("the padding row's gradient is zero:", zero)
	// Output:
	// step 1: mean loss 4.17 over 3 tokens
	// step 2: mean loss 3.76 over 3 tokens
	// step 3: mean loss 3.37 over 3 tokens
	// step 4: mean loss 3.00 over 3 tokens
	// step 5: mean loss 2.66 over 3 tokens
	// the padding row's gradient is zero: true
}
