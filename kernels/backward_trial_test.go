//go:build heedtrial

package kernels

import (
	"fmt"
	"math"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// TestBackwardRatios times each backward kernel beside its forward
// counterpart (and the rows kernels beside a Go loop of the vector kernel)
// under every ISA: the functions of a case run interleaved, a batch of calls
// each per round, and the log gives each one's median thread CPU time per
// call over the rounds and its ratio to the case's first function. It
// asserts nothing; the numbers are for kernels/DESIGN.md.
//
//	go test -tags heedtrial -run BackwardRatios -v ./kernels
func TestBackwardRatios(t *testing.T) {
	type fn struct {
		name string
		f    func()
	}
	type bcase struct {
		name string
		fs   []fn
	}
	var cases []bcase
	for _, S := range []int{64, 256, 1024, 4096} {
		const d = 256
		k := Matrix{Rows: S, Cols: d, Stride: d, Data: ramp(S * d)}
		dk := Matrix{Rows: S, Cols: d, Stride: d, Data: make([]float32, S*d)}
		q, v, ds, sc := ramp(d), ramp(d), ramp(S), make([]float32, S)
		dq, dv := make([]float32, d), make([]float32, d)
		for i := range ds {
			ds[i] += 1 // every row computed
		}
		cases = append(cases, bcase{fmt.Sprintf("additive S=%d d=%d", S, d), []fn{
			{"AdditiveScore", func() { AdditiveScore(sc, k, q, v) }},
			{"backward", func() { AdditiveScoreBackwardAdd(dq, dv, dk, k, q, v, ds) }},
			{"backward no dk", func() { AdditiveScoreBackwardAdd(dq, dv, Matrix{}, k, q, v, ds) }},
		}})
	}
	for _, n := range []int{512, 4096} {
		x, y, dy, dx := ramp(n), probs(n), ramp(n), make([]float32, n)
		ly := append([]float32(nil), y...)
		Log(ly, ly)
		cases = append(cases,
			bcase{fmt.Sprintf("softmax n=%d", n), []fn{
				{"Softmax", func() { Softmax(dx, x) }},
				{"backward", func() { SoftmaxBackward(dx, y, dy) }},
			}},
			bcase{fmt.Sprintf("log-softmax n=%d", n), []fn{
				{"LogSoftmax", func() { LogSoftmax(dx, x) }},
				{"backward", func() { LogSoftmaxBackward(dx, ly, dy) }},
			}},
			bcase{fmt.Sprintf("activations n=%d", n), []fn{
				{"Mul", func() { Mul(dx, y, dy) }},
				{"Tanh", func() { Tanh(dx, x) }},
				{"TanhBackward", func() { TanhBackward(dx, y, dy) }},
				{"Sigmoid", func() { Sigmoid(dx, x) }},
				{"SigmoidBackward", func() { SigmoidBackward(dx, y, dy) }},
			}})
	}
	for _, sh := range [][2]int{{192, 64}, {192, 128}, {192, 512}, {64, 2048}} {
		rows, cols := sh[0], sh[1]
		mk := func(s []float32) Matrix { return Matrix{Rows: rows, Cols: cols, Stride: cols, Data: s} }
		y, dy, dx := mk(probs(rows*cols)), mk(ramp(rows*cols)), mk(make([]float32, rows*cols))
		ly := mk(append([]float32(nil), y.Data...))
		Log(ly.Data, ly.Data)
		cases = append(cases, bcase{fmt.Sprintf("rows %dx%d", rows, cols), []fn{
			{"softmax loop", func() {
				for i := 0; i < rows; i++ {
					SoftmaxBackward(dx.Row(i), y.Row(i), dy.Row(i))
				}
			}},
			{"softmax rows", func() { SoftmaxBackwardRows(dx, y, dy) }},
			{"log-softmax loop", func() {
				for i := 0; i < rows; i++ {
					LogSoftmaxBackward(dx.Row(i), ly.Row(i), dy.Row(i))
				}
			}},
			{"log-softmax rows", func() { LogSoftmaxBackwardRows(dx, ly, dy) }},
		}})
	}
	for _, sh := range [][2]int{{64, 64}, {192, 512}} {
		rows, cols := sh[0], sh[1]
		mk := func(s []float32) Matrix { return Matrix{Rows: rows, Cols: cols, Stride: cols, Data: s} }
		s, p, w := mk(ramp(rows*cols)), mk(make([]float32, rows*cols)), mk(make([]float32, rows*cols))
		pr, dp := mk(probs(rows*cols)), mk(ramp(rows*cols))
		lse, m, sum, delta := make([]float32, rows), make([]float32, rows), make([]float32, rows), ramp(rows)
		for i := range lse {
			lse[i] = 3
		}
		cases = append(cases, bcase{fmt.Sprintf("flash tile %dx%d", rows, cols), []fn{
			{"OnlineSoftmaxBand", func() {
				copy(w.Data, s.Data)
				for i := range m {
					m[i] = float32(math.Inf(-1))
				}
				OnlineSoftmaxBand(w, cols, m, sum)
			}},
			{"Exp", func() { Exp(p.Data, s.Data) }},
			{"SoftmaxRecompute", func() { SoftmaxRecompute(p, s, 0.125, lse, cols) }},
			{"diagonal (d = 1)", func() { SoftmaxRecompute(p, s, 0.125, lse, 1) }},
			{"Mul", func() { Mul(w.Data, pr.Data, dp.Data) }},
			{"SoftmaxBackwardBlock", func() { SoftmaxBackwardBlock(w, pr, dp, delta) }},
		}})
	}

	var out strings.Builder
	eachISA(func(isa string) {
		if isa == "generic" {
			return
		}
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for _, c := range cases {
			// A batch of calls long enough for the clock: about 50 µs.
			reps := make([]int, len(c.fs))
			for i, f := range c.fs {
				t0 := threadCPU()
				f.f()
				reps[i] = max(1, int(50e3/float64(max(1, threadCPU()-t0))))
			}
			times := make([][]float64, len(c.fs))
			for r := 0; r < 31; r++ {
				for i, f := range c.fs {
					t0 := threadCPU()
					for j := 0; j < reps[i]; j++ {
						f.f()
					}
					times[i] = append(times[i], float64(threadCPU()-t0)/float64(reps[i]))
				}
			}
			med := make([]float64, len(c.fs))
			for i := range times {
				sort.Float64s(times[i])
				med[i] = times[i][len(times[i])/2]
			}
			for i, f := range c.fs {
				fmt.Fprintf(&out, "%-11s %-22s %-20s %10.3f µs  %5.2f\n", isa, c.name, f.name, med[i]/1e3, med[i]/med[0])
			}
		}
	})
	t.Log("\n" + out.String())
}
