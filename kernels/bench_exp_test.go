package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// expLoop and tanhLoop are the plain Go loops a user would write.
func expLoop(dst, x []float32) {
	for i, v := range x {
		dst[i] = float32(math.Exp(float64(v)))
	}
}

func tanhLoop(dst, x []float32) {
	for i, v := range x {
		dst[i] = float32(math.Tanh(float64(v)))
	}
}

// benchElementwise benchmarks kernel beside loop at every vector size, on
// inputs spread over [−span/2, span/2).
func benchElementwise(b *testing.B, span float32, kernel, loop func(dst, x []float32)) {
	for _, n := range vecSizes {
		x, dst := ramp(n), make([]float32, n)
		for i := range x {
			x[i] *= span
		}
		b.Run(fmt.Sprint("n=", n), func(b *testing.B) {
			b.Run("goloop", func(b *testing.B) {
				b.SetBytes(int64(8 * n))
				for b.Loop() {
					loop(dst, x)
				}
			})
			forEachISA(b, func(b *testing.B) {
				b.SetBytes(int64(8 * n))
				for b.Loop() {
					kernel(dst, x)
				}
			})
		})
	}
}

func BenchmarkExp(b *testing.B)  { benchElementwise(b, 20, Exp, expLoop) }
func BenchmarkTanh(b *testing.B) { benchElementwise(b, 8, Tanh, tanhLoop) }

// BenchmarkExpRandom runs Exp on n = 4096 random inputs spread over
// [−span/2, span/2): with span 200 about 60% of the AVX2 vectors hold a lane
// outside (−87, 88), which takes the special-value fix-ups, in an order the
// branch predictor cannot learn (the ramp of BenchmarkExp never does).
func BenchmarkExpRandom(b *testing.B) {
	for _, span := range []float32{20, 200} {
		r := rand.New(rand.NewPCG(1, 2))
		x, dst := make([]float32, 4096), make([]float32, 4096)
		for i := range x {
			x[i] = (r.Float32() - 0.5) * span
		}
		b.Run(fmt.Sprint("span=", span), func(b *testing.B) {
			forEachISA(b, func(b *testing.B) {
				b.SetBytes(int64(8 * len(x)))
				for b.Loop() {
					Exp(dst, x)
				}
			})
		})
	}
}
