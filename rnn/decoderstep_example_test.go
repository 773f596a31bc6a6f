package rnn_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/heedml/heed/attention"
	"github.com/heedml/heed/kernels"
	"github.com/heedml/heed/rnn"
)

// One greedy decoder step after another of an LSTM encoder–decoder with
// Luong (dot) attention, at the sizes of a small NMT model: embeddings and
// hidden state of 512, S = 50 encoder states, a vocabulary of 32,000 and a
// beam of 8. Each step is
//
//	embedding lookup → LSTM cell → Memory.Attend (dot scores, softmax,
//	context) → h̃ = tanh(W_c[c; h]) → logits = W_out·h̃ → LogSoftmax → TopK
//
// and feeds its best token to the next. The weights are random (a fixed
// seed), so the tokens mean nothing; the output lists each step's eight best
// tokens with their log-probabilities, and Σ e^logp over the vocabulary,
// which LogSoftmax makes 1. A beam search would extend each of its 8
// hypotheses with such a top 8 and keep the best 8 sums. Nothing in the loop
// allocates: every buffer is made once.
func ExampleLSTM_decoderStep() {
	const (
		vocab, embed, hidden, S, beam = 32000, 512, 512, 50, 8
	)
	rng := rand.New(rand.NewPCG(1, 2))
	mat := func(rows, cols int, scale float64) kernels.Matrix {
		m := kernels.Matrix{Rows: rows, Cols: cols, Stride: cols, Data: make([]float32, rows*cols)}
		for i := range m.Data {
			m.Data[i] = float32((2*rng.Float64() - 1) * scale)
		}
		return m
	}
	emb := mat(vocab, embed, 1)                                     // token embeddings
	wLSTM := mat(4*hidden, embed+hidden, 1/math.Sqrt(embed+hidden)) // gates i, f, g, o over [x; h]
	bLSTM := mat(1, 4*hidden, 0.1).Data                             // their bias
	encoder := mat(S, hidden, 1)                                    // the encoder's states: keys and values
	wc := mat(hidden, 2*hidden, 1/math.Sqrt(2*hidden))              // W_c of the attentional state
	wOut := mat(vocab, hidden, 16/math.Sqrt(hidden))                // the output projection

	cell := rnn.NewLSTM(embed, hidden, wLSTM, bLSTM)
	mem := attention.NewMemory(attention.Dot(), encoder, encoder) // values = keys
	att := attention.NewAttentional(wc, hidden)
	h, c := make([]float32, hidden), make([]float32, hidden)
	weights, ctx, ht := make([]float32, S), make([]float32, hidden), make([]float32, hidden)
	logp, probs := make([]float32, vocab), make([]float32, vocab)
	idx, val := make([]int, beam), make([]float32, beam)

	tok := 1 // the start token
	for step := 1; step <= 3; step++ {
		cell.Step(h, c, emb.Row(tok), h, c)
		mem.Attend(weights, ctx, h)
		att.Apply(ht, ctx, h)
		kernels.MatVec(logp, wOut, ht)
		kernels.LogSoftmax(logp, logp)
		kernels.TopK(idx, val, logp)

		kernels.Exp(probs, logp)
		fmt.Printf("step %d: Σp = %.4f, top %d:", step, kernels.Sum(probs), beam)
		for j := range idx {
			fmt.Printf(" %d (%.2f)", idx[j], val[j])
		}
		fmt.Println()
		tok = idx[0]
	}
	// Output:
	// step 1: Σp = 1.0000, top 8: 1020 (-8.75) 26404 (-8.75) 13047 (-8.81) 2548 (-8.82) 19206 (-8.82) 12798 (-8.84) 29619 (-8.85) 10967 (-8.87)
	// step 2: Σp = 1.0000, top 8: 27040 (-8.31) 20871 (-8.32) 24755 (-8.36) 10967 (-8.36) 12946 (-8.43) 12798 (-8.44) 7854 (-8.45) 7902 (-8.48)
	// step 3: Σp = 1.0000, top 8: 29335 (-8.54) 29669 (-8.56) 24755 (-8.72) 4362 (-8.72) 10967 (-8.73) 26460 (-8.85) 10303 (-8.90) 17320 (-8.93)
}
