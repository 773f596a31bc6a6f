package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkSoftmaxCrossEntropy times the fused loss over rows of a 32000-word
// vocabulary beside Softmax over the same rows (row by row, out of place), so
// that one run gives the ratio loss ÷ softmax under each ISA: "loss" is
// SoftmaxCrossEntropyRows, "smooth" the same with label smoothing 0.1,
// "inplace" the gradient written over the logits (which then change between
// iterations: values of the same range). Compare cpu-ns/op on a loaded
// machine.
func BenchmarkSoftmaxCrossEntropy(b *testing.B) {
	const v = 32000
	for _, rows := range []int{16, 256} {
		rng := rand.New(rand.NewPCG(1, 2))
		x := make([]float32, rows*v)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * 4)
		}
		lg := Matrix{Rows: rows, Cols: v, Stride: v, Data: x}
		dg := Matrix{Rows: rows, Cols: v, Stride: v, Data: make([]float32, rows*v)}
		in := Matrix{Rows: rows, Cols: v, Stride: v, Data: append([]float32(nil), x...)}
		targets := make([]int32, rows)
		for i := range targets {
			targets[i] = int32(rng.IntN(v))
		}
		b.Run(fmt.Sprintf("V=%d,rows=%d", v, rows), func(b *testing.B) {
			forEachISA(b, func(b *testing.B) {
				b.Run("softmax", func(b *testing.B) {
					b.SetBytes(int64(8 * rows * v))
					c := startCPU(b)
					for b.Loop() {
						for i := range rows {
							Softmax(dg.Row(i), lg.Row(i))
						}
					}
					c.stop()
				})
				b.Run("loss", func(b *testing.B) {
					b.SetBytes(int64(8 * rows * v))
					c := startCPU(b)
					for b.Loop() {
						SoftmaxCrossEntropyRows(dg, lg, targets, CrossEntropyOptions{})
					}
					c.stop()
				})
				b.Run("smooth", func(b *testing.B) {
					b.SetBytes(int64(8 * rows * v))
					c := startCPU(b)
					for b.Loop() {
						SoftmaxCrossEntropyRows(dg, lg, targets, CrossEntropyOptions{Smoothing: 0.1})
					}
					c.stop()
				})
				b.Run("inplace", func(b *testing.B) {
					b.SetBytes(int64(8 * rows * v))
					c := startCPU(b)
					for b.Loop() {
						SoftmaxCrossEntropyRows(in, in, targets, CrossEntropyOptions{})
					}
					c.stop()
				})
			})
		})
	}
}
