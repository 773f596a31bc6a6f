package bench

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/heedml/heed/attention"
	"github.com/heedml/heed/kernels"
)

// Prefill rows: causal self-attention over a prompt (T = S, d_k = d_h) with
// one or more query heads and as many or fewer key/value heads, heed's
// attention.GroupedQuery (tiled attention) beside each peer's composition of
// its own MatVecBatch, Softmax and MatTVec per query head (the MultiHead
// composition of attention.go, with query head i reading KV head
// i/(heads/kvHeads)), and beside PrefillPeers (whole-attention functions of
// other libraries, added by files behind build tags). BenchmarkPrefillPeers
// (prefill_test.go) times them.

// PrefillShape is one prefill row.
type PrefillShape struct {
	T, Dk, Heads, KVHeads int
}

func (p PrefillShape) String() string {
	return fmt.Sprintf("T=S=%d,dk=%d,h=%d,kv=%d", p.T, p.Dk, p.Heads, p.KVHeads)
}

// Flops is the causal work counted as 4·T·S·d_k/2 per query head (scores and
// context, the masked half left out).
func (p PrefillShape) Flops() float64 {
	return float64(p.Heads) * 4 * float64(p.T) * float64(p.T) * float64(p.Dk) / 2
}

// PrefillShapes are the rows: 1 and 8 heads, and 8 query heads on 2 KV heads.
var PrefillShapes = []PrefillShape{
	{512, 64, 1, 1}, {512, 64, 8, 8}, {512, 64, 8, 2},
	{2048, 128, 1, 1}, {2048, 128, 8, 8}, {2048, 128, 8, 2},
}

// PrefillInputs holds one row's inputs in heed's layout: q T×(heads·d_k), k
// and v S×(kvHeads·d_k), out T×(heads·d_k).
type PrefillInputs struct {
	Shape   PrefillShape
	Q, K, V kernels.Matrix
	Out     kernels.Matrix
	ws      attention.Workspace
	scores  kernels.Matrix // T×S, for the compositions
	p       []float32
}

// NewPrefillInputs returns random inputs for s.
func NewPrefillInputs(r *rand.Rand, s PrefillShape) *PrefillInputs {
	return &PrefillInputs{
		Shape: s,
		Q:     matrix(r, s.T, s.Heads*s.Dk, 1),
		K:     matrix(r, s.T, s.KVHeads*s.Dk, 1),
		V:     matrix(r, s.T, s.KVHeads*s.Dk, 1),
		Out:   matrix(r, s.T, s.Heads*s.Dk, 0),
	}
}

// Heed runs heed's tiled attention on one goroutine per GOMAXPROCS.
func (in *PrefillInputs) Heed() {
	s := in.Shape
	attention.GroupedQuery(in.Out, in.Q, in.K, in.V, s.Heads, s.KVHeads, attention.Causal, &in.ws)
}

// Composition returns one call of im's composition, or nil if im lacks a
// kernel it needs.
func (in *PrefillInputs) Composition(im *Impl) func() {
	if im.Heed || im.Parallel || im.MatVecBatch == nil || im.MatTVec == nil || im.Decode != decodeAttend {
		return nil
	}
	s := in.Shape
	T, dk, group := s.T, s.Dk, s.Heads/s.KVHeads
	in.scores = matrix(rand.New(rand.NewPCG(0, 0)), T, T, 0)
	in.p = make([]float32, T)
	softmax := im.softmax()
	inv := float32(1 / math.Sqrt(float64(dk)))
	return func() {
		for i := range s.Heads {
			j := i / group
			qi, ki := colBlock(in.Q, i*dk, (i+1)*dk), colBlock(in.K, j*dk, (j+1)*dk)
			vi, oi := colBlock(in.V, j*dk, (j+1)*dk), colBlock(in.Out, i*dk, (i+1)*dk)
			im.MatVecBatch(in.scores, ki, qi)
			for t := range T {
				n := t + 1 // causal, T = S
				x, p := in.scores.Row(t)[:n], in.p[:n]
				for c := range x {
					x[c] *= inv
				}
				softmax(p, x)
				o := oi.Row(t)
				clear(o)
				im.MatTVec(o, rowBlock(vi, 0, n), p)
			}
		}
	}
}

// PrefillPeer is another library's whole causal multi-head attention.
type PrefillPeer struct {
	Name, Note string
	// Bind prepares the peer's layout of in (outside the timing) and returns
	// one call that leaves heed's layout of the output in in.Out, or nil if
	// the peer cannot do the shape. Layout copies made by the call itself are
	// part of its time.
	Bind func(in *PrefillInputs) func()
}

// PrefillPeers is filled by files behind build tags (prefill_simd.go).
var PrefillPeers []*PrefillPeer
