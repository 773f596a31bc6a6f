package kernels

import (
	"fmt"
	"testing"
)

// Benchmarks run every kernel under every supported ISA beside plain Go loops,
// so ratios come from one run: go test -bench . ./kernels | benchstat.

var vecSizes = []int{16, 64, 256, 1024, 4096, 65536}

var matSizes = []int{64, 128, 256, 512, 1024}

func ramp(n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(i%17)/17 - 0.5
	}
	return s
}

var sink float32

// dotLoop is the plain Go dot product a user would write: one accumulator.
func dotLoop(x, y []float32) float32 {
	var s float32
	for i := range x {
		s += x[i] * y[i]
	}
	return s
}

func BenchmarkDot(b *testing.B) {
	for _, n := range vecSizes {
		x, y := ramp(n), ramp(n)
		b.Run(fmt.Sprint("n=", n), func(b *testing.B) {
			b.Run("goloop", func(b *testing.B) {
				b.SetBytes(int64(8 * n))
				c := startCPU(b)
				for b.Loop() {
					sink = dotLoop(x, y)
				}
				c.stop()
			})
			forEachISA(b, func(b *testing.B) {
				b.SetBytes(int64(8 * n))
				c := startCPU(b)
				for b.Loop() {
					sink = Dot(x, y)
				}
				c.stop()
			})
		})
	}
}

func BenchmarkMatVec(b *testing.B) {
	for _, n := range matSizes {
		a := Matrix{Rows: n, Cols: n, Stride: n, Data: ramp(n * n)}
		x, dst := ramp(n), make([]float32, n)
		b.Run(fmt.Sprintf("%dx%d", n, n), func(b *testing.B) {
			b.Run("goloop", func(b *testing.B) {
				b.SetBytes(int64(4 * n * n))
				c := startCPU(b)
				for b.Loop() {
					for r := range dst {
						dst[r] = dotLoop(a.Row(r), x)
					}
				}
				c.stop()
			})
			forEachISA(b, func(b *testing.B) {
				b.SetBytes(int64(4 * n * n))
				c := startCPU(b)
				for b.Loop() {
					MatVec(dst, a, x)
				}
				c.stop()
			})
		})
	}
}
