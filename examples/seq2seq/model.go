package main

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/heedml/heed/attention"
	"github.com/heedml/heed/kernels"
	"github.com/heedml/heed/rnn"
)

// Config is the shape of the model and its training step. The model is
// bench/torch/seq2seq.py's, whose docstring specifies it: source and target
// embeddings (V×E each), a one-layer LSTM encoder and decoder (E → H), the
// decoder started from the encoder's final state and fed the target shifted
// right (teacher forcing, no input feeding), attention of every decoder state
// over its own pair's encoder states (Score: dot, general or additive), the
// attentional state h̃ = tanh(W_c[c; h]), the projection W_out·h̃ + b_out over
// the vocabulary, and the mean cross-entropy of the B·Tt target tokens.
type Config struct {
	V, E, H int    // vocabulary, embedding, hidden
	B       int    // sentence pairs per step
	Ts, Tt  int    // source and target lengths
	Score   string // "dot", "general" or "additive"
	Adam    kernels.AdamConfig
}

// BOS is the token that starts every target input.
const BOS = 1

// defaultAdam is PyTorch's Adam: lr 1e-3, betas (0.9, 0.999), eps 1e-8.
var defaultAdam = kernels.AdamConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}

// check panics unless c describes a model.
func (c Config) check() {
	if c.V < 2 || c.E < 1 || c.H < 1 || c.B < 1 || c.Ts < 1 || c.Tt < 1 {
		panic(fmt.Sprintf("seq2seq: config %+v: want V ≥ 2 and every size ≥ 1", c))
	}
	switch c.Score {
	case "dot", "general", "additive":
	default:
		panic(fmt.Sprintf("seq2seq: score %q: want dot, general or additive", c.Score))
	}
}

// Params holds every parameter of the model as a view into one flat slice,
// so that the optimizer's step is one pass over all of them. The layouts are
// the dump format's (bench/torch/seq2seq.py): row-major, LSTM weights
// [W_ih | W_hh] with one bias.
type Params struct {
	Flat               []float32
	SrcEmb, TgtEmb     kernels.Matrix // V×E
	EncW, DecW         kernels.Matrix // 4H×(E+H)
	EncB, DecB         []float32      // 4H
	AttW, AttW1, AttW2 kernels.Matrix // H×H (general; additive)
	AttV               []float32      // H (additive)
	Wc                 kernels.Matrix // H×2H
	OutW               kernels.Matrix // V×H
	OutB               []float32      // V
	names              []string
	shapes             [][]int
	offsets            []int
}

// newParams returns zero parameters (or gradients) of the model c.
func newParams(c Config) *Params {
	p := &Params{}
	type spec struct {
		name  string
		shape []int
	}
	specs := []spec{
		{"src_emb", []int{c.V, c.E}}, {"tgt_emb", []int{c.V, c.E}},
		{"enc_w", []int{4 * c.H, c.E + c.H}}, {"enc_b", []int{4 * c.H}},
		{"dec_w", []int{4 * c.H, c.E + c.H}}, {"dec_b", []int{4 * c.H}},
	}
	switch c.Score {
	case "general":
		specs = append(specs, spec{"att_w", []int{c.H, c.H}})
	case "additive":
		specs = append(specs, spec{"att_w1", []int{c.H, c.H}}, spec{"att_w2", []int{c.H, c.H}}, spec{"att_v", []int{c.H}})
	}
	specs = append(specs, spec{"wc", []int{c.H, 2 * c.H}}, spec{"out_w", []int{c.V, c.H}}, spec{"out_b", []int{c.V}})
	n := 0
	for _, s := range specs {
		p.names, p.shapes, p.offsets = append(p.names, s.name), append(p.shapes, s.shape), append(p.offsets, n)
		n += size(s.shape)
	}
	p.Flat = make([]float32, n)
	for i, s := range specs {
		d := p.Flat[p.offsets[i] : p.offsets[i]+size(s.shape)]
		var m kernels.Matrix
		if len(s.shape) == 2 {
			m = kernels.Matrix{Rows: s.shape[0], Cols: s.shape[1], Stride: s.shape[1], Data: d}
		}
		switch s.name {
		case "src_emb":
			p.SrcEmb = m
		case "tgt_emb":
			p.TgtEmb = m
		case "enc_w":
			p.EncW = m
		case "enc_b":
			p.EncB = d
		case "dec_w":
			p.DecW = m
		case "dec_b":
			p.DecB = d
		case "att_w":
			p.AttW = m
		case "att_w1":
			p.AttW1 = m
		case "att_w2":
			p.AttW2 = m
		case "att_v":
			p.AttV = d
		case "wc":
			p.Wc = m
		case "out_w":
			p.OutW = m
		case "out_b":
			p.OutB = d
		}
	}
	return p
}

func size(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// init fills p as the reference initialises it: embeddings N(0, 1), every
// other parameter U(−1/√n, 1/√n) with n its number of columns (H for the
// LSTMs' weights and biases and the projection, 2H for W_c).
func (p *Params) init(c Config, rng *rand.Rand) {
	for i, name := range p.names {
		d, shape := p.Flat[p.offsets[i]:p.offsets[i]+size(p.shapes[i])], p.shapes[i]
		if name == "src_emb" || name == "tgt_emb" {
			for j := range d {
				d[j] = float32(rng.NormFloat64())
			}
			continue
		}
		n := c.H
		if name == "wc" {
			n = shape[1]
		}
		a := 1 / math.Sqrt(float64(n))
		for j := range d {
			d[j] = float32((2*rng.Float64() - 1) * a)
		}
	}
}

// Batch is one step's data: B pairs, row-major (pair b's tokens at b·Ts and
// b·Tt): the source, the target input (BOS, then the targets shifted right)
// and the target output.
type Batch struct {
	Src, TgtIn, TgtOut []int32
}

// Model is the model's parameters with everything a training step needs:
// the gradients (one flat slice, as the parameters), Adam's moments, the
// cells with their tapes, one attention Memory per pair, and the step's
// activations and their gradients. All of it is allocated by NewModel: a
// step allocates nothing.
type Model struct {
	C       Config
	P, G    *Params
	m, v    []float32
	steps   int
	enc     *rnn.LSTM
	dec     *rnn.LSTM
	encTape rnn.LSTMTape
	decTape rnn.LSTMTape
	mems    []*attention.Memory
	att     *attention.Attentional
	targets []int32 // B·Tt, step-major (row t·B + b)
	ones    []float32

	// Activations, step-major: row t·B + b is pair b at step t.
	xs, xt   kernels.Matrix // embeddings, Ts·B×E and Tt·B×E
	hs, ht   kernels.Matrix // encoder and decoder states, ·×H
	cs, cd   kernels.Matrix // final cell states B×H
	zero     kernels.Matrix // B×H zeros (the encoder's initial state)
	weights  kernels.Matrix // B·Tt×Ts, pair-major: rows b·Tt… are pair b's
	ctx      kernels.Matrix // contexts, Tt·B×H
	attn     kernels.Matrix // h̃, Tt·B×H
	logits   kernels.Matrix // Tt·B×V, then their gradient in place
	dattn    kernels.Matrix
	dctx, dh kernels.Matrix // Tt·B×H
	dhs      kernels.Matrix // Ts·B×H
	dxs, dxt kernels.Matrix
	dh0, dc0 kernels.Matrix // B×H
}

// NewModel returns the model c with parameters initialised from seed.
func NewModel(c Config, seed uint64) *Model {
	c.check()
	if c.Adam == (kernels.AdamConfig{}) {
		c.Adam = defaultAdam
	}
	md := &Model{C: c, P: newParams(c), G: newParams(c)}
	md.P.init(c, rand.New(rand.NewPCG(seed, 0x5eed)))
	md.m, md.v = make([]float32, len(md.P.Flat)), make([]float32, len(md.P.Flat))
	md.enc = rnn.NewLSTM(c.E, c.H, md.P.EncW, md.P.EncB)
	md.dec = rnn.NewLSTM(c.E, c.H, md.P.DecW, md.P.DecB)
	md.att = attention.NewAttentional(md.P.Wc, c.H)
	var sc attention.Scorer
	switch c.Score {
	case "dot":
		sc = attention.Dot()
	case "general":
		sc = attention.General(md.P.AttW)
	default:
		sc = attention.Additive(md.P.AttW1, md.P.AttW2, md.P.AttV)
	}
	B, Ts, Tt, H, E, V := c.B, c.Ts, c.Tt, c.H, c.E, c.V
	mat := func(r, cols int) kernels.Matrix {
		return kernels.Matrix{Rows: r, Cols: cols, Stride: cols, Data: make([]float32, r*cols)}
	}
	md.xs, md.xt = mat(Ts*B, E), mat(Tt*B, E)
	md.hs, md.ht = mat(Ts*B, H), mat(Tt*B, H)
	md.cs, md.cd, md.zero = mat(B, H), mat(B, H), mat(B, H)
	md.weights, md.ctx, md.attn = mat(B*Tt, Ts), mat(Tt*B, H), mat(Tt*B, H)
	md.logits = mat(Tt*B, V)
	md.dattn, md.dctx, md.dh = mat(Tt*B, H), mat(Tt*B, H), mat(Tt*B, H)
	md.dhs, md.dxs, md.dxt = mat(Ts*B, H), mat(Ts*B, E), mat(Tt*B, E)
	md.dh0, md.dc0 = mat(B, H), mat(B, H)
	md.targets, md.ones = make([]int32, B*Tt), make([]float32, B*Tt)
	for i := range md.ones {
		md.ones[i] = 1
	}
	md.mems = make([]*attention.Memory, B)
	for b := range md.mems {
		keys := pairRows(md.hs, b, B)
		md.mems[b] = attention.NewMemory(sc, keys, keys)
	}
	return md
}

// pairRows returns pair b's rows of the step-major matrix m (T·B rows): a
// T-row view with B times m's stride.
func pairRows(m kernels.Matrix, b, B int) kernels.Matrix {
	T := m.Rows / B
	return kernels.Matrix{Rows: T, Cols: m.Cols, Stride: B * m.Stride, Data: m.Data[b*m.Stride : (T-1)*B*m.Stride+b*m.Stride+m.Cols]}
}

// rowsOf returns rows [lo, hi) of m.
func rowsOf(m kernels.Matrix, lo, hi int) kernels.Matrix {
	return kernels.Matrix{Rows: hi - lo, Cols: m.Cols, Stride: m.Stride, Data: m.Data[lo*m.Stride : (hi-1)*m.Stride+m.Cols]}
}

// checkBatch panics unless d fits the model's shapes and vocabulary.
func (md *Model) checkBatch(d Batch) {
	c := md.C
	if len(d.Src) != c.B*c.Ts || len(d.TgtIn) != c.B*c.Tt || len(d.TgtOut) != c.B*c.Tt {
		panic(fmt.Sprintf("seq2seq: batch of %d, %d, %d tokens; want %d, %d, %d", len(d.Src), len(d.TgtIn), len(d.TgtOut), c.B*c.Ts, c.B*c.Tt, c.B*c.Tt))
	}
	for _, s := range [][]int32{d.Src, d.TgtIn, d.TgtOut} {
		for _, t := range s {
			if t < 0 || int(t) >= c.V {
				panic(fmt.Sprintf("seq2seq: token %d out of range [0, %d)", t, c.V))
			}
		}
	}
}

// Forward runs the model on d and returns the mean cross-entropy of its
// target tokens, leaving the logits' gradient (of that mean) in md.logits
// and every activation the backward needs.
func (md *Model) Forward(d Batch) float32 {
	md.checkBatch(d)
	c, p := md.C, md.P
	B, Ts, Tt := c.B, c.Ts, c.Tt
	// Embeddings, step-major.
	for b := 0; b < B; b++ {
		for s := 0; s < Ts; s++ {
			copy(md.xs.Row(s*B+b), p.SrcEmb.Row(int(d.Src[b*Ts+s])))
		}
		for t := 0; t < Tt; t++ {
			copy(md.xt.Row(t*B+b), p.TgtEmb.Row(int(d.TgtIn[b*Tt+t])))
			md.targets[t*B+b] = d.TgtOut[b*Tt+t]
		}
	}
	// Encoder from zeros; the decoder from the encoder's final state (h_T is
	// the last B rows of hs).
	md.enc.Forward(&md.encTape, md.hs, md.cs, md.xs, md.zero, md.zero)
	md.dec.Forward(&md.decTape, md.ht, md.cd, md.xt, rowsOf(md.hs, (Ts-1)*B, Ts*B), md.cs)
	// Attention of each pair's decoder states over its encoder states.
	for b, m := range md.mems {
		keys := pairRows(md.hs, b, B)
		m.Reset(keys, keys)
		m.AttendMany(rowsOf(md.weights, b*Tt, (b+1)*Tt), pairRows(md.ctx, b, B), pairRows(md.ht, b, B))
	}
	md.att.ApplyMany(md.attn, md.ctx, md.ht)
	// logits = h̃·W_outᵀ + b_out, then the loss and its gradient in place.
	for i := 0; i < md.logits.Rows; i++ {
		copy(md.logits.Row(i), p.OutB)
	}
	kernels.Gemm(kernels.NoTrans, kernels.Trans, 1, md.attn, p.OutW, 1, md.logits)
	loss, n := kernels.SoftmaxCrossEntropyRows(md.logits, md.logits, md.targets, kernels.CrossEntropyOptions{})
	return loss / float32(n)
}

// Backward adds the gradient of the last Forward's loss to md.G (which the
// caller zeroes, ZeroGrad, once per step).
func (md *Model) Backward(d Batch) {
	c, p, g := md.C, md.P, md.G
	B, Ts, Tt := c.B, c.Ts, c.Tt
	dlogits := md.logits
	// The projection: db += Σ_rows dlogits, dW_out += dlogitsᵀ·h̃, dh̃ = dlogits·W_out.
	kernels.MatTVecAdd(g.OutB, dlogits, md.ones)
	kernels.Gemm(kernels.Trans, kernels.NoTrans, 1, dlogits, md.attn, 1, g.OutW)
	kernels.Gemm(kernels.NoTrans, kernels.NoTrans, 1, dlogits, p.OutW, 0, md.dattn)
	// The attentional state: dW_c, dc and dh (the decoder states' first part).
	clear(md.dctx.Data)
	clear(md.dh.Data)
	md.att.ApplyManyBackward(g.Wc, md.dctx, md.dh, md.dattn, md.attn, md.ctx, md.ht)
	// Attention: the queries' gradients add into dh, the keys' (the encoder
	// states, also the values) into dhs, the scorer's into its parameters.
	clear(md.dhs.Data)
	for b, m := range md.mems {
		gr := attention.Grads{Keys: pairRows(md.dhs, b, B), W: g.AttW, W1: g.AttW1, W2: g.AttW2, V: g.AttV}
		m.AttendManyBackward(&gr, pairRows(md.dh, b, B), kernels.Matrix{}, pairRows(md.dctx, b, B),
			rowsOf(md.weights, b*Tt, (b+1)*Tt), pairRows(md.ht, b, B))
	}
	// The decoder through time: its initial state's gradient is the
	// encoder's final state's.
	clear(md.dxt.Data)
	clear(md.dh0.Data)
	clear(md.dc0.Data)
	md.dec.Backward(&rnn.LSTMGrads{W: g.DecW, B: g.DecB}, md.dxt, md.dh0, md.dc0, &md.decTape, md.xt, md.dh,
		kernels.Matrix{}, kernels.Matrix{})
	clear(md.dxs.Data)
	md.enc.Backward(&rnn.LSTMGrads{W: g.EncW, B: g.EncB}, md.dxs, kernels.Matrix{}, kernels.Matrix{}, &md.encTape, md.xs,
		md.dhs, md.dh0, md.dc0)
	// The embeddings: each position's input gradient into its token's row.
	for b := 0; b < B; b++ {
		for s := 0; s < Ts; s++ {
			e := g.SrcEmb.Row(int(d.Src[b*Ts+s]))
			kernels.AddScaled(e, 1, md.dxs.Row(s*B+b), e)
		}
		for t := 0; t < Tt; t++ {
			e := g.TgtEmb.Row(int(d.TgtIn[b*Tt+t]))
			kernels.AddScaled(e, 1, md.dxt.Row(t*B+b), e)
		}
	}
}

// ZeroGrad zeroes the gradients.
func (md *Model) ZeroGrad() { clear(md.G.Flat) }

// Update applies one Adam (AdamW) step to every parameter.
func (md *Model) Update() {
	md.steps++
	kernels.AdamStep(md.P.Flat, md.G.Flat, md.m, md.v, md.C.Adam, md.steps)
}

// Step is one whole training step on d: zero the gradients, forward,
// backward, update. It returns the loss before the update.
func (md *Model) Step(d Batch) float32 {
	md.ZeroGrad()
	loss := md.Forward(d)
	md.Backward(d)
	md.Update()
	return loss
}
