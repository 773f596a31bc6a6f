//go:build !purego

package kernels

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// BenchmarkShift2 times LogSoftmax's last pass alone against AddConstTo's
// kernel, the same loads and stores with one operation fewer.
func BenchmarkShift2(b *testing.B) {
	for _, n := range []int{256, 4096, 32768} {
		x, dst := ramp(n), make([]float32, n)
		for _, k := range []struct {
			name   string
			kernel func(dst, x []float32)
		}{
			{"shift2AVX2", func(dst, x []float32) { shift2AVX2(dst, x, 0.5, 0.25) }},
			{"shift2AVX512", func(dst, x []float32) { shift2AVX512(dst, x, 0.5, 0.25) }},
			{"addConstToAVX2", func(dst, x []float32) { addConstToAVX2(dst, 0.5, x) }},
			{"addConstToAVX512Z", func(dst, x []float32) { addConstToAVX512Z(dst, 0.5, x) }},
		} {
			if strings.Contains(k.name, "AVX512") && !slices.Contains(Supported(), AVX512) {
				continue
			}
			b.Run(fmt.Sprintf("n=%d/%s", n, k.name), func(b *testing.B) {
				b.SetBytes(int64(8 * n))
				c := startCPU(b)
				for b.Loop() {
					k.kernel(dst, x)
				}
				c.stop()
			})
		}
	}
}
