package kernels

import (
	"fmt"
	"math"
	"testing"
)

// The backward kernels beside their forward counterparts, under every ISA,
// in one run: go test -run '^$' -bench 'Backward|Recompute' ./kernels.
// bytes/s counts the bytes each kernel reads and writes; cpu-ns/op is the
// thread's CPU time (the machine may be shared).

// benchRun runs f as sub-benchmark name with bytes per operation.
func benchRun(b *testing.B, name string, bytes int, f func()) {
	b.Run(name, func(b *testing.B) {
		b.SetBytes(int64(bytes))
		c := startCPU(b)
		for b.Loop() {
			f()
		}
		c.stop()
	})
}

// probs returns n softmax probabilities of ramp scores.
func probs(n int) []float32 {
	y := ramp(n)
	for i := range y {
		y[i] *= 8
	}
	Softmax(y, y)
	return y
}

func BenchmarkSoftmaxBackward(b *testing.B) {
	for _, n := range []int{64, 256, 512, 1024, 4096} {
		y, dy, dx, x := probs(n), ramp(n), make([]float32, n), ramp(n)
		b.Run(fmt.Sprint("n=", n), func(b *testing.B) {
			forEachISA(b, func(b *testing.B) {
				benchRun(b, "forward", 8*n, func() { Softmax(dx, x) })
				benchRun(b, "backward", 12*n, func() { SoftmaxBackward(dx, y, dy) })
			})
		})
	}
}

func BenchmarkLogSoftmaxBackward(b *testing.B) {
	for _, n := range []int{64, 512, 4096} {
		y, dy, dx, x := probs(n), ramp(n), make([]float32, n), ramp(n)
		Log(y, y)
		b.Run(fmt.Sprint("n=", n), func(b *testing.B) {
			forEachISA(b, func(b *testing.B) {
				benchRun(b, "forward", 8*n, func() { LogSoftmax(dx, x) })
				benchRun(b, "backward", 12*n, func() { LogSoftmaxBackward(dx, y, dy) })
			})
		})
	}
}

// BenchmarkBackwardRows compares the rows kernels, one call for a tile,
// with a Go loop of the vector kernel over its rows, at the widths of
// attention tiles.
func BenchmarkBackwardRows(b *testing.B) {
	for _, sh := range [][2]int{{192, 64}, {192, 128}, {192, 512}, {64, 2048}} {
		rows, cols := sh[0], sh[1]
		mk := func(s []float32) Matrix { return Matrix{Rows: rows, Cols: cols, Stride: cols, Data: s} }
		y, dy, dx := mk(probs(rows*cols)), mk(ramp(rows*cols)), mk(make([]float32, rows*cols))
		ly := mk(append([]float32(nil), y.Data...))
		Log(ly.Data, ly.Data)
		bytes := 12 * rows * cols
		b.Run(fmt.Sprintf("%dx%d", rows, cols), func(b *testing.B) {
			forEachISA(b, func(b *testing.B) {
				benchRun(b, "softmax/rows", bytes, func() { SoftmaxBackwardRows(dx, y, dy) })
				benchRun(b, "softmax/loop", bytes, func() {
					for i := 0; i < rows; i++ {
						SoftmaxBackward(dx.Row(i), y.Row(i), dy.Row(i))
					}
				})
				benchRun(b, "logsoftmax/rows", bytes, func() { LogSoftmaxBackwardRows(dx, ly, dy) })
				benchRun(b, "logsoftmax/loop", bytes, func() {
					for i := 0; i < rows; i++ {
						LogSoftmaxBackward(dx.Row(i), ly.Row(i), dy.Row(i))
					}
				})
			})
		})
	}
}

func BenchmarkActivationBackward(b *testing.B) {
	for _, n := range []int{256, 4096} {
		x, dy, dx := ramp(n), ramp(n), make([]float32, n)
		y := make([]float32, n)
		b.Run(fmt.Sprint("n=", n), func(b *testing.B) {
			forEachISA(b, func(b *testing.B) {
				benchRun(b, "tanh/forward", 8*n, func() { Tanh(y, x) })
				benchRun(b, "tanh/backward", 12*n, func() { TanhBackward(dx, y, dy) })
				benchRun(b, "sigmoid/forward", 8*n, func() { Sigmoid(y, x) })
				benchRun(b, "sigmoid/backward", 12*n, func() { SigmoidBackward(dx, y, dy) })
				benchRun(b, "mul", 12*n, func() { Mul(dx, y, dy) })
			})
		})
	}
}

// BenchmarkAdditiveScoreBackward is the additive score's backward, with and
// without the key gradient, beside the forward on the same K (which does a
// third of the work per element: the backward adds dv, 1 − t², ds·v, dq and
// dk to the tanh).
func BenchmarkAdditiveScoreBackward(b *testing.B) {
	for _, S := range []int{64, 256, 1024, 4096} {
		const d = 256
		k := Matrix{Rows: S, Cols: d, Stride: d, Data: ramp(S * d)}
		dk := Matrix{Rows: S, Cols: d, Stride: d, Data: make([]float32, S*d)}
		q, v, ds, sc := ramp(d), ramp(d), ramp(S), make([]float32, S)
		dq, dv := make([]float32, d), make([]float32, d)
		for i := range q {
			q[i] *= 4
		}
		for i := range ds {
			if ds[i] == 0 {
				ds[i] = 0.25 // every row computed
			}
		}
		b.Run(fmt.Sprintf("S=%d,d=%d", S, d), func(b *testing.B) {
			forEachISA(b, func(b *testing.B) {
				benchRun(b, "forward", 4*S*d, func() { AdditiveScore(sc, k, q, v) })
				benchRun(b, "backward", 12*S*d, func() { AdditiveScoreBackwardAdd(dq, dv, dk, k, q, v, ds) })
				benchRun(b, "backward-nodk", 4*S*d, func() { AdditiveScoreBackwardAdd(dq, dv, Matrix{}, k, q, v, ds) })
			})
		})
	}
}

// BenchmarkSoftmaxRecompute is the recomputation of a flash-attention tile's
// probabilities, a whole tile and a diagonal one, beside the forward's
// online softmax of the same tile (a maximum, the exponentials and their
// sums) and Exp of as many elements.
func BenchmarkSoftmaxRecompute(b *testing.B) {
	for _, sh := range [][2]int{{64, 64}, {192, 512}} {
		rows, cols := sh[0], sh[1]
		mk := func() Matrix { return Matrix{Rows: rows, Cols: cols, Stride: cols, Data: ramp(rows * cols)} }
		s, p, w := mk(), mk(), mk()
		lse, m, sum := make([]float32, rows), make([]float32, rows), make([]float32, rows)
		for i := range lse {
			lse[i] = 3
		}
		b.Run(fmt.Sprintf("%dx%d", rows, cols), func(b *testing.B) {
			forEachISA(b, func(b *testing.B) {
				benchRun(b, "recompute", 8*rows*cols, func() { SoftmaxRecompute(p, s, 0.125, lse, cols) })
				benchRun(b, "recompute-diagonal", 8*rows*cols, func() { SoftmaxRecompute(p, s, 0.125, lse, 1) })
				benchRun(b, "forward-band", 8*rows*cols, func() {
					copy(w.Data, s.Data)
					for i := range m {
						m[i] = float32(math.Inf(-1))
					}
					OnlineSoftmaxBand(w, cols, m, sum)
				})
				benchRun(b, "exp", 8*rows*cols, func() { Exp(p.Data, s.Data) })
			})
		})
	}
}

// BenchmarkSoftmaxBackwardBlock is a flash tile's dS = P∘(dP − D) beside
// Mul on as many elements (the streaming ceiling of two reads and a write).
func BenchmarkSoftmaxBackwardBlock(b *testing.B) {
	for _, sh := range [][2]int{{64, 64}, {192, 512}} {
		rows, cols := sh[0], sh[1]
		mk := func(s []float32) Matrix { return Matrix{Rows: rows, Cols: cols, Stride: cols, Data: s} }
		p, dp, ds := mk(probs(rows*cols)), mk(ramp(rows*cols)), mk(make([]float32, rows*cols))
		delta := ramp(rows)
		b.Run(fmt.Sprintf("%dx%d", rows, cols), func(b *testing.B) {
			forEachISA(b, func(b *testing.B) {
				benchRun(b, "block", 12*rows*cols, func() { SoftmaxBackwardBlock(ds, p, dp, delta) })
				benchRun(b, "mul", 12*rows*cols, func() { Mul(ds.Data, p.Data, dp.Data) })
			})
		})
	}
}
