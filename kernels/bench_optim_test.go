package kernels

import (
	"fmt"
	"testing"
)

// BenchmarkOptimStep times AdamStep (AdamW) and SGDStep (Nesterov momentum,
// weight decay) over 1M and 16M parameters under each ISA, beside streaming
// references over the same slices: "sum", Sum over p, g, m and v (read
// only, the streaming-read ceiling), "copy", Go's memmove, and "axpy",
// dst = αx + y through AddScaled (two streams read, one written). The MB/s of
// each counts the bytes the program reads and writes: Adam 28 per parameter
// (p, g, m, v read; p, m, v written), SGD 20 (p, g, buf read; p, buf
// written), sum 16, axpy 12, copy 8; a write to a line not read before costs
// a read as well (copy, axpy), one in place does not (the steps). Compare cpu-ns/op on a
// loaded machine.
func BenchmarkOptimStep(b *testing.B) {
	for _, n := range []int{1 << 20, 1 << 24} {
		p, g, m, v := ramp(n), ramp(n), ramp(n), ramp(n)
		for i := range v {
			v[i] *= v[i] // a second moment: ≥ 0
		}
		adam := AdamConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01, Decay: DecoupledDecay}
		sgd := SGDConfig{LR: 1e-3, Momentum: 0.9, WeightDecay: 1e-4, Kind: Nesterov}
		b.Run(fmt.Sprintf("n=%dM", n>>20), func(b *testing.B) {
			b.Run("sum", func(b *testing.B) {
				b.SetBytes(int64(16 * n))
				c := startCPU(b)
				for b.Loop() {
					sink = Sum(p) + Sum(g) + Sum(m) + Sum(v)
				}
				c.stop()
			})
			b.Run("copy", func(b *testing.B) {
				b.SetBytes(int64(8 * n))
				c := startCPU(b)
				for b.Loop() {
					copy(m, p)
				}
				c.stop()
			})
			forEachISA(b, func(b *testing.B) {
				b.Run("adam", func(b *testing.B) {
					b.SetBytes(int64(28 * n))
					c := startCPU(b)
					step := 0
					for b.Loop() {
						step++
						AdamStep(p, g, m, v, adam, step)
					}
					c.stop()
				})
				b.Run("sgd", func(b *testing.B) {
					b.SetBytes(int64(20 * n))
					c := startCPU(b)
					for b.Loop() {
						SGDStep(p, g, m, sgd)
					}
					c.stop()
				})
				b.Run("axpy", func(b *testing.B) {
					b.SetBytes(int64(12 * n))
					c := startCPU(b)
					for b.Loop() {
						AddScaled(v, 1e-3, g, p)
					}
					c.stop()
				})
			})
		})
	}
}
