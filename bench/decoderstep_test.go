package bench

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/heedml/heed/attention"
	"github.com/heedml/heed/kernels"
	"github.com/heedml/heed/rnn"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// One decoder step of an LSTM encoder–decoder with Luong (dot) attention and
// a beam of 8, single-threaded: embedding lookup → LSTM cell → Attend over
// S = 50 encoder states → h̃ = tanh(W_c[c; h]) → logits over a 32k vocabulary
// → LogSoftmax → the top 8. heed's composition beside the same step on
// gonum's blas32 (Sgemv) with Go loops for the element-wise work:
//
//	go test -run XXX -bench 'DecoderStep' -count 5 .
const (
	stepVocab  = 32000
	stepHidden = 512
	stepEmbed  = 512
	stepS      = 50
	stepBeam   = 8
)

type stepModel struct {
	emb, wLSTM, keys, wc, wOut kernels.Matrix
	bLSTM                      []float32
}

func newStepModel() *stepModel {
	rng := rand.New(rand.NewPCG(7, 8))
	mat := func(r, c int, s float64) kernels.Matrix {
		m := kernels.Matrix{Rows: r, Cols: c, Stride: c, Data: make([]float32, r*c)}
		for i := range m.Data {
			m.Data[i] = float32((rng.Float64()*2 - 1) * s)
		}
		return m
	}
	H, E := stepHidden, stepEmbed
	m := &stepModel{
		emb:   mat(stepVocab, E, 1),
		wLSTM: mat(4*H, E+H, 1/math.Sqrt(float64(E+H))),
		keys:  mat(stepS, H, 1),
		wc:    mat(H, 2*H, 1/math.Sqrt(float64(2*H))),
		wOut:  mat(stepVocab, H, 4/math.Sqrt(float64(H))),
	}
	m.bLSTM = mat(1, 4*H, 0.1).Data
	return m
}

// heedStep holds heed's per-sequence state and buffers.
type heedStep struct {
	m                        *stepModel
	cell                     *rnn.LSTM
	mem                      *attention.Memory
	att                      *attention.Attentional
	h, c, w, ctx, ht, logits []float32
	idx                      []int
	val                      []float32
}

func newHeedStep(m *stepModel) *heedStep {
	H := stepHidden
	return &heedStep{m: m,
		cell: rnn.NewLSTM(stepEmbed, H, m.wLSTM, m.bLSTM),
		mem:  attention.NewMemory(attention.Dot(), m.keys, m.keys),
		att:  attention.NewAttentional(m.wc, H),
		h:    make([]float32, H), c: make([]float32, H), w: make([]float32, stepS),
		ctx: make([]float32, H), ht: make([]float32, H), logits: make([]float32, stepVocab),
		idx: make([]int, stepBeam), val: make([]float32, stepBeam)}
}

func (s *heedStep) lstm(tok int) { s.cell.Step(s.h, s.c, s.m.emb.Row(tok), s.h, s.c) }
func (s *heedStep) attend()      { s.mem.Attend(s.w, s.ctx, s.h) }
func (s *heedStep) attentional() { s.att.Apply(s.ht, s.ctx, s.h) }
func (s *heedStep) project()     { kernels.MatVec(s.logits, s.m.wOut, s.ht) }
func (s *heedStep) logSoftmax()  { kernels.LogSoftmax(s.logits, s.logits) }
func (s *heedStep) topK()        { kernels.TopK(s.idx, s.val, s.logits) }
func (s *heedStep) step(tok int) int {
	s.lstm(tok)
	s.attend()
	s.attentional()
	s.project()
	s.logSoftmax()
	s.topK()
	return s.idx[0]
}

// gonumDecoderStep is the same step on blas32 and Go loops.
type gonumDecoderStep struct {
	m                                  *stepModel
	h, c, g, xh, w, ctx, hc, ht, logit []float32
	idx                                []int
	val                                []float32
}

func newGonumDecoderStep(m *stepModel) *gonumDecoderStep {
	H := stepHidden
	return &gonumDecoderStep{m: m, h: make([]float32, H), c: make([]float32, H), g: make([]float32, 4*H),
		xh: make([]float32, stepEmbed+H), w: make([]float32, stepS), ctx: make([]float32, H),
		hc: make([]float32, 2*H), ht: make([]float32, H), logit: make([]float32, stepVocab),
		idx: make([]int, stepBeam), val: make([]float32, stepBeam)}
}

func stepGen(m kernels.Matrix) blas32.General {
	return blas32.General{Rows: m.Rows, Cols: m.Cols, Stride: m.Stride, Data: m.Data}
}
func stepVec(x []float32) blas32.Vector { return blas32.Vector{N: len(x), Inc: 1, Data: x} }

func stepSig(v float32) float32 { return float32(1 / (1 + math.Exp(-float64(v)))) }

func (s *gonumDecoderStep) step(tok int) int {
	H := stepHidden
	copy(s.xh, s.m.emb.Row(tok))
	copy(s.xh[stepEmbed:], s.h)
	copy(s.g, s.m.bLSTM)
	blas32.Gemv(blas.NoTrans, 1, stepGen(s.m.wLSTM), stepVec(s.xh), 1, stepVec(s.g))
	gonumCell(s.h, s.c, s.c, s.g)
	gonumAttend(s.ctx, s.w, s.h, s.m.keys)
	copy(s.hc, s.ctx)
	copy(s.hc[H:], s.h)
	blas32.Gemv(blas.NoTrans, 1, stepGen(s.m.wc), stepVec(s.hc), 0, stepVec(s.ht))
	for j, v := range s.ht {
		s.ht[j] = float32(math.Tanh(float64(v)))
	}
	blas32.Gemv(blas.NoTrans, 1, stepGen(s.m.wOut), stepVec(s.ht), 0, stepVec(s.logit))
	gonumLogSoftmaxTopK(s.idx, s.val, s.logit)
	return s.idx[0]
}

// gonumCell sets h and c to an LSTM cell's new state from its gates g (the
// i, f, g, o blocks of len(h) each) and the old cell state cOld (c may be
// cOld), in Go loops.
func gonumCell(h, c, cOld, g []float32) {
	H := len(h)
	for j := range H {
		i, f, gg, o := stepSig(g[j]), stepSig(g[H+j]), float32(math.Tanh(float64(g[2*H+j]))), stepSig(g[3*H+j])
		c[j] = f*cOld[j] + i*gg
		h[j] = o * float32(math.Tanh(float64(c[j])))
	}
}

// gonumAttend sets ctx to the Luong dot attention context of h over keys
// (keys and values alike): the scores by Sgemv into w, a softmax in Go, the
// context by Sgemv.
func gonumAttend(ctx, w, h []float32, keys kernels.Matrix) {
	blas32.Gemv(blas.NoTrans, 1, stepGen(keys), stepVec(h), 0, stepVec(w))
	mx := float32(math.Inf(-1))
	for _, v := range w {
		mx = max(mx, v)
	}
	var sum float32
	for i, v := range w {
		w[i] = float32(math.Exp(float64(v - mx)))
		sum += w[i]
	}
	for i := range w {
		w[i] /= sum
	}
	blas32.Gemv(blas.Trans, 1, stepGen(keys), stepVec(w), 0, stepVec(ctx))
}

// gonumLogSoftmaxTopK sets row to its log-softmax and idx, val to its
// len(idx) largest entries in decreasing order, by insertion (the simple Go
// way).
func gonumLogSoftmaxTopK(idx []int, val, row []float32) {
	mx := float32(math.Inf(-1))
	for _, v := range row {
		mx = max(mx, v)
	}
	var se float64
	for _, v := range row {
		se += math.Exp(float64(v - mx))
	}
	l := float32(math.Log(se))
	for i, v := range row {
		row[i] = v - mx - l
	}
	k := len(idx)
	for j := range val {
		val[j] = float32(math.Inf(-1))
	}
	for i, v := range row {
		if v <= val[k-1] {
			continue
		}
		p := k - 1
		for p > 0 && v > val[p-1] {
			val[p], idx[p] = val[p-1], idx[p-1]
			p--
		}
		val[p], idx[p] = v, i
	}
}

func BenchmarkDecoderStep(b *testing.B) {
	m := newStepModel()
	hs := newHeedStep(m)
	gs := newGonumDecoderStep(m)
	b.Run("heed", func(b *testing.B) {
		tok := 1
		timeCPU(b, func() { tok = hs.step(tok) })
	})
	b.Run("gonum", func(b *testing.B) {
		tok := 1
		timeCPU(b, func() { tok = gs.step(tok) })
	})
	hs.step(1)
	scratch := make([]float32, stepVocab)
	parts := []struct {
		name string
		f    func()
	}{
		{"lstm", func() { hs.lstm(3) }},
		{"attend", hs.attend},
		{"attentional", hs.attentional},
		{"projection", hs.project},
		{"logsoftmax", func() { kernels.LogSoftmax(scratch, hs.logits) }},
		{"topk", hs.topK},
	}
	for _, p := range parts {
		b.Run("heed-part/"+p.name, func(b *testing.B) { timeCPU(b, p.f) })
	}
}
