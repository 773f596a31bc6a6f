package bench

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/heedml/heed/attention"
	"github.com/heedml/heed/kernels"
	"github.com/heedml/heed/rnn"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// memCeilings measures, once, the machine's FMA peak (GFLOP/s) that the
// rooflines of the skinny rows and of the beam step's projection are
// computed from, and its streaming bandwidth from memory (GB/s), which
// they log.
var memCeilings = sync.OnceValue(func() Ceilings { return MeasureCeilings(20*time.Millisecond, 3) })

// memNow measures the streaming bandwidth from memory for a row's roofline:
// MeasureMemory with short rounds, so that a row can afford two. A row takes the
// better of one measurement before its timing and one after (the shared
// machine's speed drifts over a run by more than the kernels differ), and
// reports it as mem-GB/s.
func memNow() float64 { return MeasureMemory(5*time.Millisecond, 3) }

// The decoder step of BenchmarkDecoderStep for a beam of stepBeam
// hypotheses, each with its own state: the LSTM cells of all of them at once
// → Attend of every hypothesis over the same S encoder states → h̃ for each
// → logits of each over the vocabulary (the output projection, a skinny
// product of stepBeam rows against the 32000×512 W_out) → LogSoftmax per
// row → its top stepBeam → the stepBeam best of the stepBeam² extensions,
// whose states are carried on.

// beam is the search's state, shared by both implementations: each
// hypothesis's log-probability and last token, and the candidates' buffers.
type beam struct {
	score  []float32
	tok    []int
	parent []int
	idx    []int
	val    []float32
}

func newBeam() beam {
	b := beam{score: make([]float32, stepBeam), tok: make([]int, stepBeam), parent: make([]int, stepBeam),
		idx: make([]int, stepBeam*stepBeam), val: make([]float32, stepBeam*stepBeam)}
	for i := range b.tok {
		b.tok[i] = 1 + i
	}
	return b
}

// choose keeps the stepBeam best of the extensions in idx and val (row h
// holds hypothesis h's top tokens and their log-probabilities): parent,
// tok and score become the survivors'.
func (b *beam) choose() {
	k := stepBeam
	var best [stepBeam]struct {
		s      float32
		h, tok int
	}
	for i := range best {
		best[i].s = float32(math.Inf(-1))
	}
	for c, t := range b.idx {
		h := c / k
		s := b.score[h] + b.val[c]
		if s <= best[k-1].s {
			continue
		}
		p := k - 1
		for p > 0 && s > best[p-1].s {
			best[p] = best[p-1]
			p--
		}
		best[p].s, best[p].h, best[p].tok = s, h, t
	}
	for i, e := range best {
		b.score[i], b.parent[i], b.tok[i] = e.s, e.h, e.tok
	}
}

// carry sets row i of dst to row parent[i] of src for every hypothesis.
func carry(dst, src []float32, parent []int, n int) {
	for i, p := range parent {
		copy(dst[i*n:(i+1)*n], src[p*n:(p+1)*n])
	}
}

// heedBeam is the beam step on heed: LSTM.StepBatch, Memory.AttendMany,
// Attentional.ApplyMany, MatVecBatch (or GemmPacked), LogSoftmax and TopK.
type heedBeam struct {
	m                       *stepModel
	cell                    *rnn.LSTM
	mem                     *attention.Memory
	att                     *attention.Attentional
	x, h, c, h2, c2, w, ctx kernels.Matrix
	ht, logits              kernels.Matrix
	// out, when set, is W_out packed once as op(B) = W_outᵀ: the projection
	// is GemmPacked on the calling goroutine (the weights of a trained
	// model are fixed, so a search packs them before it starts).
	out     *kernels.PackedB
	scratch kernels.GemmScratch
	beam
}

// newHeedPackedBeam is newHeedBeam with W_out packed (heedBeam.out).
func newHeedPackedBeam(m *stepModel) *heedBeam {
	s := newHeedBeam(m)
	s.out = new(kernels.PackedB)
	s.out.Pack(kernels.Trans, m.wOut)
	return s
}

func newHeedBeam(m *stepModel) *heedBeam {
	B, H := stepBeam, stepHidden
	mat := func(r, c int) kernels.Matrix {
		return kernels.Matrix{Rows: r, Cols: c, Stride: c, Data: make([]float32, r*c)}
	}
	return &heedBeam{m: m,
		cell: rnn.NewLSTM(stepEmbed, H, m.wLSTM, m.bLSTM),
		mem:  attention.NewMemory(attention.Dot(), m.keys, m.keys),
		att:  attention.NewAttentional(m.wc, H),
		x:    mat(B, stepEmbed), h: mat(B, H), c: mat(B, H), h2: mat(B, H), c2: mat(B, H),
		w: mat(B, stepS), ctx: mat(B, H), ht: mat(B, H), logits: mat(B, stepVocab),
		beam: newBeam()}
}

func (s *heedBeam) project() {
	if s.out != nil {
		s.scratch.GemmPacked(kernels.NoTrans, 1, s.ht, s.out, 0, s.logits)
		return
	}
	kernels.MatVecBatch(s.logits, s.m.wOut, s.ht)
}

func (s *heedBeam) step() {
	for i, t := range s.tok {
		copy(s.x.Row(i), s.m.emb.Row(t))
	}
	s.cell.StepBatch(s.h2, s.c2, s.x, s.h, s.c)
	s.mem.AttendMany(s.w, s.ctx, s.h2)
	s.att.ApplyMany(s.ht, s.ctx, s.h2)
	s.project()
	k := stepBeam
	for i := range stepBeam {
		row := s.logits.Row(i)
		kernels.LogSoftmax(row, row)
		kernels.TopK(s.idx[i*k:(i+1)*k], s.val[i*k:(i+1)*k], row)
	}
	s.choose()
	carry(s.h.Data, s.h2.Data, s.parent, stepHidden)
	carry(s.c.Data, s.c2.Data, s.parent, stepHidden)
}

// gonumBeam is the same step on blas32 (Sgemm for the products of all
// hypotheses, Sgemv for each one's attention) and Go loops, as
// gonumDecoderStep is.
type gonumBeam struct {
	m                                      *stepModel
	xh, g, h, c, h2, c2, hc, ht, w, logits []float32
	beam
}

func newGonumBeam(m *stepModel) *gonumBeam {
	B, H := stepBeam, stepHidden
	return &gonumBeam{m: m, xh: make([]float32, B*(stepEmbed+H)), g: make([]float32, B*4*H),
		h: make([]float32, B*H), c: make([]float32, B*H), h2: make([]float32, B*H), c2: make([]float32, B*H),
		hc: make([]float32, B*2*H), ht: make([]float32, B*H), w: make([]float32, stepS),
		logits: make([]float32, B*stepVocab), beam: newBeam()}
}

func gen(rows, cols int, d []float32) blas32.General {
	return blas32.General{Rows: rows, Cols: cols, Stride: cols, Data: d}
}

func (s *gonumBeam) step() {
	B, H, E := stepBeam, stepHidden, stepEmbed
	for i, t := range s.tok {
		copy(s.xh[i*(E+H):], s.m.emb.Row(t))
		copy(s.xh[i*(E+H)+E:], s.h[i*H:(i+1)*H])
		copy(s.g[i*4*H:(i+1)*4*H], s.m.bLSTM)
	}
	blas32.Gemm(blas.NoTrans, blas.Trans, 1, gen(B, E+H, s.xh), stepGen(s.m.wLSTM), 1, gen(B, 4*H, s.g))
	for i := range B {
		h := s.h2[i*H : (i+1)*H]
		gonumCell(h, s.c2[i*H:(i+1)*H], s.c[i*H:(i+1)*H], s.g[i*4*H:])
		gonumAttend(s.hc[i*2*H:i*2*H+H], s.w, h, s.m.keys)
		copy(s.hc[i*2*H+H:], h)
	}
	blas32.Gemm(blas.NoTrans, blas.Trans, 1, gen(B, 2*H, s.hc), stepGen(s.m.wc), 0, gen(B, H, s.ht))
	for j, v := range s.ht {
		s.ht[j] = float32(math.Tanh(float64(v)))
	}
	blas32.Gemm(blas.NoTrans, blas.Trans, 1, gen(B, H, s.ht), stepGen(s.m.wOut), 0, gen(B, stepVocab, s.logits))
	k := stepBeam
	for i := range B {
		gonumLogSoftmaxTopK(s.idx[i*k:(i+1)*k], s.val[i*k:(i+1)*k], s.logits[i*stepVocab:(i+1)*stepVocab])
	}
	s.choose()
	carry(s.h, s.h2, s.parent, H)
	carry(s.c, s.c2, s.parent, H)
}

// BenchmarkDecoderBeam times the beam step on heed (W_out as is, and packed
// once: heed-packed) and on gonum, and heed's output projection alone
// (MatVecBatch of stepBeam rows against W_out, or GemmPacked against it
// packed; 65.5 MB, which the step's other matrices push out of the caches)
// with its GB/s and "of-roofline": max(bytes/BW, flops/FMA peak) over the
// time, with the FMA peak measured in this process (memCeilings) and BW
// around the row (memNow).
//
//	go test -run XXX -bench 'DecoderBeam' -count 5 .
func BenchmarkDecoderBeam(b *testing.B) {
	m := newStepModel()
	hb, hp, gb := newHeedBeam(m), newHeedPackedBeam(m), newGonumBeam(m)
	b.Run("heed", func(b *testing.B) { timeCPU(b, hb.step) })
	b.Run("heed-packed", func(b *testing.B) { timeCPU(b, hp.step) })
	b.Run("gonum", func(b *testing.B) { timeCPU(b, gb.step) })
	peak := memCeilings().GFlops
	bytes := float64(4 * stepVocab * stepHidden)
	flops := 2 * float64(stepBeam) * float64(stepVocab) * float64(stepHidden)
	for _, v := range []struct {
		name string
		s    *heedBeam
	}{{"heed-part/projection", hb}, {"heed-packed-part/projection", hp}} {
		b.Run(v.name, func(b *testing.B) {
			// Each projection after a whole step, as in the search: the
			// step's other reads evict W_out; only the projection is
			// timed.
			var ns float64
			bw := memNow()
			for b.Loop() {
				b.StopTimer()
				v.s.step()
				b.StartTimer()
				t0 := time.Now()
				v.s.project()
				ns += float64(time.Since(t0).Nanoseconds())
			}
			ns /= float64(b.N)
			bw = max(bw, memNow())
			b.ReportMetric(bytes/ns, "GB/s")
			b.ReportMetric(bw, "mem-GB/s")
			b.ReportMetric(max(bytes/bw, flops/peak)/ns, "of-roofline")
		})
	}
}

// TestDecoderBeamAgrees runs heed's and gonum's beam steps side by side from
// the same start for a few steps, under each ISA: the best hypothesis's
// token and every survivor's log-probability agree (to float32 rounding of
// sums over the vocabulary), and the survivors are in order.
func TestDecoderBeamAgrees(t *testing.T) {
	m := newStepModel()
	for _, isa := range kernels.Supported() {
		withISA(isa, func() {
			for _, hb := range []*heedBeam{newHeedBeam(m), newHeedPackedBeam(m)} {
				gb := newGonumBeam(m)
				name := "heed"
				if hb.out != nil {
					name = "heed-packed"
				}
				for step := range 3 {
					hb.step()
					gb.step()
					if hb.tok[0] != gb.tok[0] {
						t.Fatalf("%v %s step %d: best token %d, gonum's %d", isa, name, step, hb.tok[0], gb.tok[0])
					}
					for i := range stepBeam {
						if d := math.Abs(float64(hb.score[i] - gb.score[i])); d > 1e-3*(1+math.Abs(float64(gb.score[i]))) {
							t.Fatalf("%v %s step %d: survivor %d log-probability %v, gonum's %v", isa, name, step, i, hb.score[i], gb.score[i])
						}
						if i > 0 && hb.score[i] > hb.score[i-1] {
							t.Fatalf("%v %s step %d: survivors out of order: %v", isa, name, step, hb.score)
						}
					}
				}
			}
		})
	}
}
