package kernels

import (
	"fmt"
	"testing"
)

// BenchmarkElementwise runs each element-wise kernel out of place (dst, x, y
// distinct) under every ISA; the generic ISA is package fallback's Go loop.
// bytes/s counts the bytes read and written.
func BenchmarkElementwise(b *testing.B) {
	const alpha = float32(-0.75)
	for _, op := range []struct {
		name   string
		bytes  int
		kernel func(dst, x, y []float32)
	}{
		{"Add", 12, Add},
		{"Sub", 12, Sub},
		{"Mul", 12, Mul},
		{"Div", 12, Div},
		{"AxpyTo", 12, func(dst, x, y []float32) { AddScaled(dst, alpha, x, y) }},
		{"ScaleTo", 8, func(dst, x, _ []float32) { Scale(dst, alpha, x) }},
		{"AddConstTo", 8, func(dst, x, _ []float32) { AddConst(dst, alpha, x) }},
	} {
		for _, n := range vecSizes {
			b.Run(fmt.Sprintf("%s/n=%d", op.name, n), func(b *testing.B) {
				dst, x, y := make([]float32, n), ramp(n), ramp(n)
				for i := range y {
					y[i] += 1 // no zero divisors
				}
				forEachISA(b, func(b *testing.B) {
					b.SetBytes(int64(op.bytes * n))
					c := startCPU(b)
					for b.Loop() {
						op.kernel(dst, x, y)
					}
					c.stop()
				})
			})
		}
	}
}
