//go:build unix

package kernels

import "testing"

// BenchmarkGemmMicro times the active ISA's micro-kernel alone on panels that
// stay in L1: the ceiling the blocked product can reach.
func BenchmarkGemmMicro(b *testing.B) {
	mk := gemmMicroFor(Active())
	if mk == nil {
		b.Skip("no micro-kernel")
	}
	k := mk.kc
	a := make([]float32, k*mk.mr)
	bp := make([]float32, k*mk.nr)
	c := make([]float32, mk.mr*mk.nr)
	for i := range a {
		a[i] = 1
	}
	for i := range bp {
		bp[i] = 1
	}
	b.ResetTimer()
	t0 := processCPU()
	for i := 0; i < b.N; i++ {
		mk.kern(k, &a[0], &bp[0], &c[0], mk.nr, 1, 0)
	}
	reportGflops(b, t0, 2*float64(k*mk.mr*mk.nr))
}
