//go:build unix

package rnn_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/heedml/heed/kernels"
	"github.com/heedml/heed/rnn"
)

// BenchmarkLSTMStep times one LSTM step (in = hidden): the fused step
// (step: MatVec, then kernels.LSTMCell), the step as formerly composed from
// whole-vector kernels (composed: MatVec, then eight calls), the gate product
// alone (matvec), and the element-wise part alone, fused (cell) and composed
// (cell-composed). Beside the wall time it reports the thread's CPU time per
// operation (cpu-ns/op), steadier on a shared machine.
func BenchmarkLSTMStep(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, H := range []int{128, 512} {
		w := randWeights(rng, 4*H, 2*H)
		bias := make([]float32, 4*H)
		cell := rnn.NewLSTM(H, H, w, bias)
		x, h, c := make([]float32, H), make([]float32, H), make([]float32, H)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		b.Run(fmt.Sprintf("H=%d/step", H), func(b *testing.B) {
			timeCPU(b, func() { cell.Step(h, c, x, h, c) })
		})
		b.Run(fmt.Sprintf("H=%d/composed", H), func(b *testing.B) {
			timeCPU(b, func() { cell.StepComposed(h, c, x, h, c) })
		})
		xh, g := make([]float32, 2*H), make([]float32, 4*H)
		b.Run(fmt.Sprintf("H=%d/matvec", H), func(b *testing.B) {
			timeCPU(b, func() { kernels.MatVec(g, w, xh) })
		})
		pre := make([]float32, 4*H)
		for i := range pre {
			pre[i] = float32(rng.NormFloat64()) * 2
		}
		b.Run(fmt.Sprintf("H=%d/cell", H), func(b *testing.B) {
			timeCPU(b, func() { kernels.LSTMCell(h, c, pre, bias, c) })
		})
		b.Run(fmt.Sprintf("H=%d/cell-composed", H), func(b *testing.B) {
			timeCPU(b, func() {
				copy(g, pre)
				kernels.Add(g, g, bias)
				kernels.Sigmoid(g[:2*H], g[:2*H])
				kernels.Tanh(g[2*H:3*H], g[2*H:3*H])
				kernels.Sigmoid(g[3*H:], g[3*H:])
				ig, fg, gg, og := g[:H:H], g[H:2*H:2*H], g[2*H:3*H:3*H], g[3*H:4*H:4*H]
				kernels.Mul(ig, ig, gg)
				kernels.Mul(c, fg, c)
				kernels.Add(c, c, ig)
				kernels.Tanh(fg, c)
				kernels.Mul(h, og, fg)
			})
		})
	}
}

// BenchmarkGRUStep is BenchmarkLSTMStep for a GRU: step (three MatVecs, then
// kernels.GRUCell), composed (the products, then eleven whole-vector calls),
// the products alone (matvec) and the element-wise part alone, fused (cell)
// and composed (cell-composed; both copy nothing but the composition's
// inputs, which it overwrites).
func BenchmarkGRUStep(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, H := range []int{128, 512} {
		w := randWeights(rng, 3*H, 2*H)
		cell := rnn.NewGRU(H, H, w, make([]float32, 3*H), make([]float32, 3*H))
		x, h := make([]float32, H), make([]float32, H)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		b.Run(fmt.Sprintf("H=%d/step", H), func(b *testing.B) {
			timeCPU(b, func() { cell.Step(h, x, h) })
		})
		b.Run(fmt.Sprintf("H=%d/composed", H), func(b *testing.B) {
			timeCPU(b, func() { cell.StepComposed(h, x, h) })
		})
		xh, g := make([]float32, 2*H), make([]float32, 3*H)
		b.Run(fmt.Sprintf("H=%d/matvec", H), func(b *testing.B) {
			timeCPU(b, func() { kernels.MatVec(g, w, xh) })
		})
		pre, nh, bx, bh := make([]float32, 3*H), make([]float32, H), make([]float32, 3*H), make([]float32, 3*H)
		for _, v := range [][]float32{pre, nh, bx, bh} {
			for i := range v {
				v[i] = float32(rng.NormFloat64())
			}
		}
		b.Run(fmt.Sprintf("H=%d/cell", H), func(b *testing.B) {
			timeCPU(b, func() { kernels.GRUCell(h, pre, nh, bx, bh, h) })
		})
		q := make([]float32, H)
		b.Run(fmt.Sprintf("H=%d/cell-composed", H), func(b *testing.B) {
			timeCPU(b, func() {
				copy(g, pre)
				copy(q, nh)
				kernels.Add(g, g, bx)
				kernels.Add(g[:2*H], g[:2*H], bh[:2*H])
				kernels.Sigmoid(g[:2*H], g[:2*H])
				r, z, n := g[:H:H], g[H:2*H:2*H], g[2*H:3*H:3*H]
				kernels.Add(q, q, bh[2*H:])
				kernels.Mul(q, r, q)
				kernels.Add(n, n, q)
				kernels.Tanh(n, n)
				kernels.Sub(q, h, n)
				kernels.Mul(q, z, q)
				kernels.Add(h, n, q)
			})
		})
	}
}

// BenchmarkStepBatch times B = 32 sequences of an LSTM and a GRU (in =
// hidden = 512) advanced by one step: StepBatch (one GemmPacked, then the
// fused pass per sequence) against 32 Steps (32 MatVecs over the weights).
func BenchmarkStepBatch(b *testing.B) {
	const B, H = 32, 512
	rng := rand.New(rand.NewPCG(7, 8))
	mat := func(rows, cols int) kernels.Matrix {
		m := kernels.Matrix{Rows: rows, Cols: cols, Stride: cols, Data: make([]float32, rows*cols)}
		for i := range m.Data {
			m.Data[i] = float32(rng.NormFloat64()) * 0.5
		}
		return m
	}
	x, h, c := mat(B, H), mat(B, H), mat(B, H)
	lstm := rnn.NewLSTM(H, H, randWeights(rng, 4*H, 2*H), make([]float32, 4*H))
	gru := rnn.NewGRU(H, H, randWeights(rng, 3*H, 2*H), make([]float32, 3*H), make([]float32, 3*H))
	b.Run("LSTM/B=32/H=512/batch", func(b *testing.B) {
		timeCPU(b, func() { lstm.StepBatch(h, c, x, h, c) })
	})
	b.Run("LSTM/B=32/H=512/steps", func(b *testing.B) {
		timeCPU(b, func() {
			for s := range B {
				lstm.Step(h.Row(s), c.Row(s), x.Row(s), h.Row(s), c.Row(s))
			}
		})
	})
	b.Run("GRU/B=32/H=512/batch", func(b *testing.B) {
		timeCPU(b, func() { gru.StepBatch(h, x, h) })
	})
	b.Run("GRU/B=32/H=512/steps", func(b *testing.B) {
		timeCPU(b, func() {
			for s := range B {
				gru.Step(h.Row(s), x.Row(s), h.Row(s))
			}
		})
	})
}

// BenchmarkCellPaired compares the fused and the composed forms side by side
// in every round (their order alternating), so that a change in the
// machine's load between them cancels: the element-wise pass alone (pass:
// LSTMCell or GRUCell against the whole-vector composition, as in
// BenchmarkLSTMStep's cell and cell-composed) and the whole step (step:
// Step against StepComposed), in = hidden. It reports the medians over the
// rounds of each form's thread CPU time per call (fused-cpu-ns/op,
// composed-cpu-ns/op) and of their ratio in each round (fused/composed).
func BenchmarkCellPaired(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, H := range []int{128, 512} {
		reps := map[int][2]int{128: {64, 4}, 512: {16, 1}}[H] // calls per round: pass, step
		w4, w3 := randWeights(rng, 4*H, 2*H), randWeights(rng, 3*H, 2*H)
		bias4, bias3a, bias3b := make([]float32, 4*H), make([]float32, 3*H), make([]float32, 3*H)
		lstm, gru := rnn.NewLSTM(H, H, w4, bias4), rnn.NewGRU(H, H, w3, bias3a, bias3b)
		x, h, c := randVecN(rng, H), randVecN(rng, H), randVecN(rng, H)
		pre4, pre3, nh := randVecN(rng, 4*H), randVecN(rng, 3*H), randVecN(rng, H)
		g, q := make([]float32, 4*H), make([]float32, H)
		b.Run(fmt.Sprintf("LSTM/H=%d/pass", H), func(b *testing.B) {
			pairCPU(b, reps[0], func() { kernels.LSTMCell(h, c, pre4, bias4, c) }, func() {
				copy(g, pre4)
				kernels.Add(g, g, bias4)
				kernels.Sigmoid(g[:2*H], g[:2*H])
				kernels.Tanh(g[2*H:3*H], g[2*H:3*H])
				kernels.Sigmoid(g[3*H:], g[3*H:])
				ig, fg, gg, og := g[:H:H], g[H:2*H:2*H], g[2*H:3*H:3*H], g[3*H:4*H:4*H]
				kernels.Mul(ig, ig, gg)
				kernels.Mul(c, fg, c)
				kernels.Add(c, c, ig)
				kernels.Tanh(fg, c)
				kernels.Mul(h, og, fg)
			})
		})
		b.Run(fmt.Sprintf("GRU/H=%d/pass", H), func(b *testing.B) {
			pairCPU(b, reps[0], func() { kernels.GRUCell(h, pre3, nh, bias3a, bias3b, h) }, func() {
				g := g[:3*H]
				copy(g, pre3)
				copy(q, nh)
				kernels.Add(g, g, bias3a)
				kernels.Add(g[:2*H], g[:2*H], bias3b[:2*H])
				kernels.Sigmoid(g[:2*H], g[:2*H])
				r, z, n := g[:H:H], g[H:2*H:2*H], g[2*H:3*H:3*H]
				kernels.Add(q, q, bias3b[2*H:])
				kernels.Mul(q, r, q)
				kernels.Add(n, n, q)
				kernels.Tanh(n, n)
				kernels.Sub(q, h, n)
				kernels.Mul(q, z, q)
				kernels.Add(h, n, q)
			})
		})
		b.Run(fmt.Sprintf("LSTM/H=%d/step", H), func(b *testing.B) {
			pairCPU(b, reps[1], func() { lstm.Step(h, c, x, h, c) }, func() { lstm.StepComposed(h, c, x, h, c) })
		})
		b.Run(fmt.Sprintf("GRU/H=%d/step", H), func(b *testing.B) {
			pairCPU(b, reps[1], func() { gru.Step(h, x, h) }, func() { gru.StepComposed(h, x, h) })
		})
	}
}

// pairCPU runs, in each round of b's loop, reps calls of fused and reps of
// composed (which first alternates), timing each group by the thread's CPU
// time, and reports the medians described at BenchmarkCellPaired.
func pairCPU(b *testing.B, reps int, fused, composed func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	group := func(f func()) float64 {
		var t0, t1 unix.Timespec
		unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &t0)
		for range reps {
			f()
		}
		unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &t1)
		return float64(t1.Nano()-t0.Nano()) / float64(reps)
	}
	var tf, tc, ratio []float64
	for b.Loop() {
		var a, c float64
		if len(tf)%2 == 0 {
			a = group(fused)
			c = group(composed)
		} else {
			c = group(composed)
			a = group(fused)
		}
		tf, tc, ratio = append(tf, a), append(tc, c), append(ratio, a/c)
	}
	median := func(v []float64) float64 {
		slices.Sort(v)
		return v[len(v)/2]
	}
	b.ReportMetric(median(tf), "fused-cpu-ns/op")
	b.ReportMetric(median(tc), "composed-cpu-ns/op")
	b.ReportMetric(median(ratio), "fused/composed")
	b.ReportMetric(0, "ns/op")
}

func randVecN(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// randWeights returns a rows×cols weight matrix with entries N(0, 0.05²).
func randWeights(rng *rand.Rand, rows, cols int) kernels.Matrix {
	w := kernels.Matrix{Rows: rows, Cols: cols, Stride: cols, Data: make([]float32, rows*cols)}
	for i := range w.Data {
		w.Data[i] = float32(rng.NormFloat64()) * 0.05
	}
	return w
}

// timeCPU runs f in b's loop on a locked thread and reports cpu-ns/op.
func timeCPU(b *testing.B, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var t0, t1 unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &t0)
	n := 0
	for b.Loop() {
		f()
		n++
	}
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &t1)
	b.ReportMetric(float64(t1.Nano()-t0.Nano())/float64(n), "cpu-ns/op")
}
