//go:build unix

package rnn_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/heedml/heed/kernels"
	"github.com/heedml/heed/rnn"
)

// seqBench is a sequence benchmark's data: PyTorch's default initialisation
// U(−1/√H, 1/√H), inputs and output gradients N(0, 1), initial states zero
// (bench/torch/rnn.py's cases).
type seqBench struct {
	T, B, In, H       int
	w                 kernels.Matrix
	x, hs, h0, c0, cT kernels.Matrix
	dhs, dhT, dcT     kernels.Matrix
	dx, dh0, dc0, dW  kernels.Matrix
	db, db2           []float32
}

func newSeqBench(rng *rand.Rand, T, B, In, H, gates int) *seqBench {
	m := func(rows, cols int, s float64, uniform bool) kernels.Matrix {
		d := make([]float32, rows*cols)
		for i := range d {
			if uniform {
				d[i] = float32((rng.Float64()*2 - 1) * s)
			} else {
				d[i] = float32(rng.NormFloat64() * s)
			}
		}
		return kernels.Matrix{Rows: rows, Cols: cols, Stride: cols, Data: d}
	}
	n := T * B
	return &seqBench{T: T, B: B, In: In, H: H,
		w: m(gates*H, In+H, 1/math.Sqrt(float64(H)), true),
		x: m(n, In, 1, false), hs: m(n, H, 0, false), h0: m(B, H, 0, false), c0: m(B, H, 0, false), cT: m(B, H, 0, false),
		dhs: m(n, H, 1, false), dhT: m(B, H, 1, false), dcT: m(B, H, 1, false),
		dx: m(n, In, 0, false), dh0: m(B, H, 0, false), dc0: m(B, H, 0, false), dW: m(gates*H, In+H, 0, false),
		db: make([]float32, gates*H), db2: make([]float32, gates*H),
	}
}

// zero clears the gradients, as a framework does before each backward.
func (s *seqBench) zero() {
	for _, v := range [][]float32{s.dx.Data, s.dh0.Data, s.dc0.Data, s.dW.Data, s.db, s.db2} {
		clear(v)
	}
}

// BenchmarkLSTMSeq times an LSTM layer over a sequence (32 steps of 16
// sequences, 512 → 512, bench/torch/rnn.py's lstm case): fwd is Forward
// (the forward of a training step, keeping the tape), bwd Backward alone
// (on the same tape: it may run again), fwdbwd both with the gradients
// zeroed before the backward (a training step's share), and infer the
// inference forward, T calls of StepBatch. Beside the wall time it reports
// the thread's CPU time (cpu-ns/op); every product runs on the calling
// goroutine.
func BenchmarkLSTMSeq(b *testing.B) {
	const T, B, In, H = 32, 16, 512, 512
	s := newSeqBench(rand.New(rand.NewPCG(36, 20)), T, B, In, H, 4)
	l := rnn.NewLSTM(In, H, s.w, make([]float32, 4*H))
	var tp rnn.LSTMTape
	g := rnn.LSTMGrads{W: s.dW, B: s.db}
	name := fmt.Sprintf("T=%d/B=%d/in=%d/H=%d", T, B, In, H)
	fwd := func() { l.Forward(&tp, s.hs, s.cT, s.x, s.h0, s.c0) }
	bwd := func() { l.Backward(&g, s.dx, s.dh0, s.dc0, &tp, s.x, s.dhs, s.dhT, s.dcT) }
	b.Run(name+"/infer", func(b *testing.B) {
		h, c := s.cT, kernels.Matrix{Rows: B, Cols: H, Stride: H, Data: make([]float32, B*H)}
		timeCPU(b, func() {
			clear(h.Data)
			clear(c.Data)
			for t := range T {
				xt := kernels.Matrix{Rows: B, Cols: In, Stride: In, Data: s.x.Data[t*B*In:]}
				l.StepBatch(h, c, xt, h, c)
			}
		})
	})
	b.Run(name+"/fwd", func(b *testing.B) { timeCPU(b, fwd) })
	fwd()
	b.Run(name+"/bwd", func(b *testing.B) { timeCPU(b, func() { s.zero(); bwd() }) })
	b.Run(name+"/fwdbwd", func(b *testing.B) { timeCPU(b, func() { fwd(); s.zero(); bwd() }) })
}

// BenchmarkGRUSeq is BenchmarkLSTMSeq for a GRU (bench/torch/rnn.py's gru
// case: the gradients of the outputs and of h_T).
func BenchmarkGRUSeq(b *testing.B) {
	const T, B, In, H = 32, 16, 512, 512
	s := newSeqBench(rand.New(rand.NewPCG(36, 21)), T, B, In, H, 3)
	gc := rnn.NewGRU(In, H, s.w, make([]float32, 3*H), make([]float32, 3*H))
	var tp rnn.GRUTape
	g := rnn.GRUGrads{W: s.dW, Bx: s.db, Bh: s.db2}
	name := fmt.Sprintf("T=%d/B=%d/in=%d/H=%d", T, B, In, H)
	fwd := func() { gc.Forward(&tp, s.hs, s.x, s.h0) }
	bwd := func() { gc.Backward(&g, s.dx, s.dh0, &tp, s.x, s.dhs, s.dhT) }
	b.Run(name+"/infer", func(b *testing.B) {
		h := s.cT
		timeCPU(b, func() {
			clear(h.Data)
			for t := range T {
				xt := kernels.Matrix{Rows: B, Cols: In, Stride: In, Data: s.x.Data[t*B*In:]}
				gc.StepBatch(h, xt, h)
			}
		})
	})
	b.Run(name+"/fwd", func(b *testing.B) { timeCPU(b, fwd) })
	fwd()
	b.Run(name+"/bwd", func(b *testing.B) { timeCPU(b, func() { s.zero(); bwd() }) })
	b.Run(name+"/fwdbwd", func(b *testing.B) { timeCPU(b, func() { fwd(); s.zero(); bwd() }) })
}
