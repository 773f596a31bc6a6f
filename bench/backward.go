package bench

import (
	"fmt"
	"math/rand/v2"

	"github.com/heedml/heed/attention"
	"github.com/heedml/heed/kernels"
)

// Backward rows: heed's training calls, the forward that keeps what the
// backward needs and the backward itself, each timed on its own so that the
// backward's fraction of the FMA ceiling sits beside the forward's. The
// prefill shapes (prefill.go) time MultiHeadTrain/GroupedQueryTrain and
// GroupedQueryBackward; ManyShapes time a teacher-forced AttendMany and
// AttendManyBackward for Luong dot and Bahdanau attention.
// BenchmarkBackward (backward_test.go) times them; the peers have no
// backward (bench/torch/compare.py times PyTorch's on the same shapes).

// BackwardFlops is the causal backward's work: 2 flops per multiply-add of
// its five products over the pairs the mask keeps, (3·d_k + 2·d_h) per pair
// and head with d_h = d_k — 2.5 times Flops.
func (p PrefillShape) BackwardFlops() float64 { return 2.5 * p.Flops() }

// PrefillTrain holds one prefill row's training state: the forward's out and
// logsumexp, the gradient of out and the gradients of q, k and v.
type PrefillTrain struct {
	*PrefillInputs
	LSE        []float32
	DOut       kernels.Matrix
	DQ, DK, DV kernels.Matrix
	ws         attention.Workspace
}

// NewPrefillTrain returns random inputs and a random gradient of out for s.
func NewPrefillTrain(r *rand.Rand, s PrefillShape) *PrefillTrain {
	in := NewPrefillInputs(r, s)
	return &PrefillTrain{
		PrefillInputs: in,
		LSE:           make([]float32, s.Heads*s.T),
		DOut:          matrix(r, s.T, s.Heads*s.Dk, 1),
		DQ:            matrix(r, s.T, s.Heads*s.Dk, 0),
		DK:            matrix(r, s.T, s.KVHeads*s.Dk, 0),
		DV:            matrix(r, s.T, s.KVHeads*s.Dk, 0),
	}
}

// Forward runs the training forward: Out and LSE.
func (p *PrefillTrain) Forward() {
	s := p.Shape
	attention.GroupedQueryTrain(p.Out, p.LSE, p.Q, p.K, p.V, s.Heads, s.KVHeads, attention.Causal, &p.ws)
}

// Backward sets DQ, DK and DV from DOut and the last Forward's Out and LSE.
func (p *PrefillTrain) Backward() {
	s := p.Shape
	attention.GroupedQueryBackward(p.DQ, p.DK, p.DV, p.DOut, p.Out, p.LSE, p.Q, p.K, p.V, s.Heads, s.KVHeads, attention.Causal, &p.ws)
}

// ManyShape is one teacher-forced row: Seqs sequences, each B decoder states
// against S encoder states of width D (the keys and the values; Bahdanau's
// d_a = D).
type ManyShape struct {
	Additive      bool
	Seqs, B, S, D int
}

func (m ManyShape) String() string {
	sc := "dot"
	if m.Additive {
		sc = "additive"
	}
	return fmt.Sprintf("%s/seqs=%d,B=%d,S=%d,d=%d", sc, m.Seqs, m.B, m.S, m.D)
}

// Flops counts the forward's products, 2 flops per multiply-add: dot
// 2·B·S·d (scores, context) per sequence; Bahdanau S·d·d_a + B·d·d_a + B·S·d
// (K = H̄W₂ᵀ, W₁h, the context; the tanh pass, bounded by its instructions,
// is not counted).
func (m ManyShape) Flops() float64 {
	B, S, d := float64(m.B), float64(m.S), float64(m.D)
	if m.Additive {
		return 2 * float64(m.Seqs) * (S*d*d + B*d*d + B*S*d)
	}
	return 2 * float64(m.Seqs) * 2 * B * S * d
}

// BackwardFlops counts the backward's products likewise: dot 4·B·S·d (the
// weights' gradient, dV, dQ, dK); Bahdanau 2·B·S·d + 2·B·d·d_a + 2·S·d·d_a
// (the weights' gradient and dV, dh and dW₁, dW₂ and dH̄; the fused pass's
// 3·B·S·d_a not counted).
func (m ManyShape) BackwardFlops() float64 {
	B, S, d := float64(m.B), float64(m.S), float64(m.D)
	if m.Additive {
		return 2 * float64(m.Seqs) * (2*B*S*d + 2*B*d*d + 2*S*d*d)
	}
	return 2 * float64(m.Seqs) * 4 * B * S * d
}

// ManyShapes are the teacher-forced rows: 16 sequences of 32 decoder states
// against 64 encoder states, d = d_a = 256, for dot and Bahdanau.
var ManyShapes = []ManyShape{{false, 16, 32, 64, 256}, {true, 16, 32, 64, 256}}

// ManyTrain holds one teacher-forced row as a training step keeps it: each
// sequence's encoder states, decoder states, Memory, weights and contexts;
// the gradient of the contexts and of the queries (one buffer reused per
// sequence), and the gradients the backward accumulates over all sequences
// (the keys' rows, and for Bahdanau W₁, W₂ and v).
type ManyTrain struct {
	Shape            ManyShape
	Keys, Queries    []kernels.Matrix
	W1, W2           kernels.Matrix
	V                []float32
	Weights, Context []kernels.Matrix
	DContext, DQ     kernels.Matrix
	Grads            attention.Grads
	mems             []*attention.Memory
}

// NewManyTrain returns random inputs for s.
func NewManyTrain(r *rand.Rand, s ManyShape) *ManyTrain {
	t := &ManyTrain{Shape: s}
	sc := attention.Dot()
	if s.Additive {
		scale := float32(1 / 16.0) // about 1/√d at d = 256
		t.W1, t.W2, t.V = matrix(r, s.D, s.D, scale), matrix(r, s.D, s.D, scale), uniform(r, s.D, 1)
		sc = attention.Additive(t.W1, t.W2, t.V)
		t.Grads.W1, t.Grads.W2, t.Grads.V = matrix(r, s.D, s.D, 0), matrix(r, s.D, s.D, 0), make([]float32, s.D)
	}
	for range s.Seqs {
		k := matrix(r, s.S, s.D, 1)
		t.Keys = append(t.Keys, k)
		t.Queries = append(t.Queries, matrix(r, s.B, s.D, 1))
		t.Weights = append(t.Weights, matrix(r, s.B, s.S, 0))
		t.Context = append(t.Context, matrix(r, s.B, s.D, 0))
		t.mems = append(t.mems, attention.NewMemory(sc, k, k))
	}
	t.DContext, t.DQ = matrix(r, s.B, s.D, 1), matrix(r, s.B, s.D, 0)
	t.Grads.Keys = matrix(r, s.S, s.D, 0)
	return t
}

// Forward runs every sequence's forward: Reset (Bahdanau's K = H̄W₂ᵀ) and
// AttendMany.
func (t *ManyTrain) Forward() {
	for i, m := range t.mems {
		m.Reset(t.Keys[i], t.Keys[i])
		m.AttendMany(t.Weights[i], t.Context[i], t.Queries[i])
	}
}

// Backward runs every sequence's AttendManyBackward from DContext and the
// weights of the last Forward, adding into Grads (each sequence's keys'
// gradient into the same rows, as their values do not change the work) and
// setting DQ.
func (t *ManyTrain) Backward() {
	for i, m := range t.mems {
		m.AttendManyBackward(&t.Grads, t.DQ, kernels.Matrix{}, t.DContext, t.Weights[i], t.Queries[i])
	}
}
