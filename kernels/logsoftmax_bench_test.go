package kernels

import (
	"fmt"
	"testing"
)

// BenchmarkLogSoftmax times LogSoftmax and Softmax side by side on the same
// scores (spread over [−4, 4], as BenchmarkSoftmax's) under every ISA, with
// the thread CPU time per call; LogSoftmax's target is at most 1/0.9 of
// Softmax's time.
func BenchmarkLogSoftmax(b *testing.B) {
	for _, n := range []int{256, 4096, 32768} {
		x, dst := ramp(n), make([]float32, n)
		for i := range x {
			x[i] *= 8
		}
		for _, k := range []struct {
			name   string
			kernel func(dst, x []float32)
		}{{"Softmax", Softmax}, {"LogSoftmax", LogSoftmax}} {
			b.Run(fmt.Sprintf("%s/n=%d", k.name, n), func(b *testing.B) {
				forEachISA(b, func(b *testing.B) {
					b.SetBytes(int64(8 * n))
					c := startCPU(b)
					for b.Loop() {
						k.kernel(dst, x)
					}
					c.stop()
				})
			})
		}
	}
}
