package bench

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/heedml/heed/attention"
	"github.com/heedml/heed/kernels"
)

// Attention steps: heed's attention package (under each ISA on one
// goroutine, and as heed×P with GOMAXPROCS = P, where it splits long steps,
// batches and heads over goroutines) beside each peer's natural composition of
// its own kernels: scores with its MatVec (AdditiveScore for Bahdanau,
// MatVecBatch for multi-head), its Softmax (goloop's where it has none), the
// context with its MatTVec. Query-side preparation that is not a kernel (the
// 1/√d scaling) is a Go loop for the peers.

// attnShapes maps a step case's S to its key length d.
var attnShapes = map[int]int{16: 64, 64: 64, 128: 64, 512: 128, 1024: 128, 2048: 256, 4096: 512, 8192: 512}

// multiHeadShapes maps T = S to d (heads of 64).
var multiHeadShapes = map[int]int{16: 64, 64: 128, 128: 256, 256: 256, 512: 512}

// BatchSeqs is the number of sequences in the StepBatch cases.
const BatchSeqs = 8

type attnInputs struct {
	S, D, T, heads int
	keys           kernels.Matrix // S×d (values = keys); MultiHead: k
	q, v           kernels.Matrix // MultiHead: queries T×d, values S×d
	w, w1, w2      kernels.Matrix // General W (d×d); Additive W₁, W₂ (d×d)
	av             []float32      // Additive v
	kproj          kernels.Matrix // Additive: K = H̄W₂ᵀ for the peers
	h              []float32      // the query
	weights, ctx   []float32
	out            kernels.Matrix // MultiHead output T×d
	batch          []kernels.Matrix
	bw, bc, bh     [][]float32
	mem            *attention.Memory
	mems           []*attention.Memory
	ab             attention.Batch
	ws             attention.Workspace
	// peers' scratch
	scores, u, hs []float32
	ms            kernels.Matrix
}

func isStep(k Kernel) bool { return k >= StepDot }

func newAttnCase(c *Case, r *rand.Rand) {
	k, S := c.Kernel, c.N
	if k == StepMemory {
		newDecodeCase(c, r)
		return
	}
	if isFormatStep(k) {
		newFormatCase(c, r)
		return
	}
	a := &attnInputs{S: S}
	c.attn = a
	if k == MultiHead {
		d := multiHeadShapes[S]
		a.D, a.T, a.heads = d, S, d/64
		a.q, a.keys, a.v = matrix(r, S, d, 1), matrix(r, S, d, 1), matrix(r, S, d, 1)
		a.out, a.ms, a.scores = matrix(r, S, d, 0), matrix(r, S, S, 0), make([]float32, S)
		// Σ_t (keys seen by t)·d·2 per head, ×2 (scores and context).
		seen := int64(S) * int64(S+1) / 2
		c.Label = fmt.Sprintf("T=S=%d,d=%d,%dh", S, d, a.heads)
		c.Elems, c.Flops = seen*int64(d), 4*seen*int64(d)
		c.Bytes = 4 * int64(3*S*d+S*d)
		a.ws = attention.Workspace{}
		return
	}
	d := attnShapes[S]
	a.D = d
	a.keys = matrix(r, S, d, 1)
	a.h = uniform(r, d, 1)
	a.weights, a.ctx, a.scores = make([]float32, S), make([]float32, d), make([]float32, S)
	a.u, a.hs = make([]float32, d), make([]float32, d)
	sc := attention.Dot()
	nd := int64(S) * int64(d)
	c.Label = fmt.Sprintf("S=%d,d=%d", S, d)
	c.Elems, c.Bytes, c.Flops = nd, 8*nd, 4*nd // keys read twice (scores, context)
	c.Footprint = 4 * nd
	switch k {
	case StepScaled:
		sc = attention.ScaledDot()
	case StepGeneral:
		a.w = matrix(r, d, d, float32(1/math.Sqrt(float64(d))))
		sc = attention.General(a.w)
		c.Bytes += 4 * int64(d*d)
		c.Footprint += 4 * int64(d*d)
		c.Flops += 2 * int64(d*d)
	case StepAdditive:
		s := float32(1 / math.Sqrt(float64(d)))
		a.w1, a.w2, a.av = matrix(r, d, d, s), matrix(r, d, d, s), uniform(r, d, 1)
		sc = attention.Additive(a.w1, a.w2, a.av)
		a.kproj = kernels.Matrix{Rows: S, Cols: d, Stride: d, Data: make([]float32, S*d)}
		kernels.MatVecBatch(a.kproj, a.w2, a.keys) // K = H̄W₂ᵀ, cached per sequence
		c.Bytes += 4 * int64(d*d+S*d)
		c.Footprint += 4 * int64(d*d+S*d)
		c.Flops = 2 * nd // one FMA slot per tanh: bounded by instruction throughput
	case StepBatch:
		for range BatchSeqs {
			a.batch = append(a.batch, matrix(r, S, d, 1))
			a.bw, a.bc, a.bh = append(a.bw, make([]float32, S)), append(a.bc, make([]float32, d)), append(a.bh, uniform(r, d, 1))
			a.mems = append(a.mems, attention.NewMemory(attention.Dot(), a.batch[len(a.batch)-1], a.batch[len(a.batch)-1]))
		}
		c.Label = fmt.Sprintf("%d×(S=%d,d=%d)", BatchSeqs, S, d)
		c.Elems, c.Bytes, c.Flops = BatchSeqs*nd, BatchSeqs*8*nd, BatchSeqs*4*nd
		c.Footprint = BatchSeqs * 4 * nd
	}
	a.mem = attention.NewMemory(sc, a.keys, a.keys)
}

// hasStep reports whether im can do attention step k: heed always; a peer
// when it has the kernels the composition needs.
func (im *Impl) hasStep(k Kernel) bool {
	if !isStep(k) {
		return false
	}
	if im.Decode != decodeAttend {
		return k == StepMemory
	}
	if isFormatStep(k) {
		if im.Heed {
			return !im.Parallel
		}
		return im.Format[k] != nil
	}
	if im.Heed {
		return true
	}
	if im.Parallel || im.MatVec == nil || im.MatTVec == nil {
		return false
	}
	switch k {
	case StepAdditive:
		return im.Additive != nil
	case MultiHead:
		return im.MatVecBatch != nil
	}
	return true
}

var goloopSoftmax func(dst, x []float32)

func (im *Impl) softmax() func(dst, x []float32) {
	if im.Softmax != nil {
		return im.Softmax
	}
	if goloopSoftmax == nil {
		for _, g := range registry {
			if g.Name == "goloop" {
				goloopSoftmax = g.Softmax
			}
		}
	}
	return goloopSoftmax
}

// bindStep returns one call of step k by im on the case's inputs.
func (c *Case) bindStep(im *Impl) func() {
	if c.Kernel == StepMemory {
		return c.bindDecode(im)
	}
	if isFormatStep(c.Kernel) {
		return c.bindFormat(im)
	}
	a := c.attn
	if im.Heed {
		switch c.Kernel {
		case StepBatch:
			return func() { a.ab.Attend(a.mems, a.bw, a.bc, a.bh) }
		case MultiHead:
			return func() { attention.MultiHead(a.out, a.q, a.keys, a.v, a.heads, attention.Causal, &a.ws) }
		}
		return func() { a.mem.Attend(a.weights, a.ctx, a.h) }
	}
	softmax := im.softmax()
	dotStep := func(w, ctx []float32, keys kernels.Matrix, h []float32) {
		im.MatVec(a.scores, keys, h)
		softmax(w, a.scores)
		clear(ctx)
		im.MatTVec(ctx, keys, w)
	}
	switch c.Kernel {
	case StepDot:
		return func() { dotStep(a.weights, a.ctx, a.keys, a.h) }
	case StepScaled:
		inv := float32(1 / math.Sqrt(float64(a.D)))
		return func() {
			for i, x := range a.h {
				a.hs[i] = x * inv
			}
			dotStep(a.weights, a.ctx, a.keys, a.hs)
		}
	case StepGeneral:
		return func() {
			clear(a.u)
			im.MatTVec(a.u, a.w, a.h) // u = Wᵀh
			dotStep(a.weights, a.ctx, a.keys, a.u)
		}
	case StepAdditive:
		return func() {
			im.MatVec(a.u, a.w1, a.h) // q = W₁h
			im.Additive(a.scores, a.kproj, a.u, a.av)
			softmax(a.weights, a.scores)
			clear(a.ctx)
			im.MatTVec(a.ctx, a.keys, a.weights)
		}
	case StepBatch:
		return func() {
			for i := range a.batch {
				dotStep(a.bw[i], a.bc[i], a.batch[i], a.bh[i])
			}
		}
	case MultiHead:
		T, S, dk := a.T, a.S, a.D/a.heads
		inv := float32(1 / math.Sqrt(float64(dk)))
		return func() {
			for i := 0; i < a.heads; i++ {
				qi, ki := colBlock(a.q, i*dk, (i+1)*dk), colBlock(a.keys, i*dk, (i+1)*dk)
				vi, oi := colBlock(a.v, i*dk, (i+1)*dk), colBlock(a.out, i*dk, (i+1)*dk)
				im.MatVecBatch(a.ms, ki, qi)
				for t := range T {
					n := min(S, t+1) // causal, T = S
					x, p := a.ms.Row(t)[:n], a.scores[:n]
					for j := range x {
						x[j] *= inv
					}
					softmax(p, x)
					o := oi.Row(t)
					clear(o)
					im.MatTVec(o, rowBlock(vi, 0, n), p)
				}
			}
		}
	}
	panic("bench: not a step")
}

// stepResult returns a copy of the case's output after one call.
func (c *Case) stepResult() []float32 {
	a := c.attn
	switch c.Kernel {
	case StepBatch:
		var out []float32
		for i := range a.bw {
			out = append(append(out, a.bw[i]...), a.bc[i]...)
		}
		return out
	case MultiHead:
		return append([]float32(nil), a.out.Data...)
	}
	return append(append([]float32(nil), a.weights...), a.ctx...)
}
