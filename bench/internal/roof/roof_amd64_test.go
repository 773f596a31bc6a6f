package roof

import (
	"slices"
	"testing"

	"github.com/heedml/heed/kernels"
)

// Both streaming loops must read every element exactly once.
func TestStreamLoops(t *testing.T) {
	loops := []struct {
		name  string
		isa   kernels.ISA
		f     func([]float32) float32
		block int
	}{{"StreamAVX2", kernels.AVX2, StreamAVX2, 64}, {"StreamAVX512", kernels.AVX512, StreamAVX512, 128}}
	for _, l := range loops {
		if !slices.Contains(kernels.Supported(), l.isa) {
			t.Logf("%s: %v not supported here", l.name, l.isa)
			continue
		}
		for _, blocks := range []int{0, 1, 2, 5, 64} {
			n := blocks * l.block
			buf := make([]float32, n)
			var want float32
			for i := range buf {
				buf[i] = float32(i%7 + i/l.block)
				want += buf[i]
			}
			if got := l.f(buf); got != want {
				t.Errorf("%s of %d = %v, want %v", l.name, n, got, want)
			}
		}
	}
	// The FMA loops return lane 0 of their twelve accumulators' sum.
	if slices.Contains(kernels.Supported(), kernels.AVX2) {
		if got, want := FMAAVX2(3, 1), float32(3*12); got != want {
			t.Errorf("FMAAVX2(3, 1) = %v, want %v", got, want)
		}
	}
	if slices.Contains(kernels.Supported(), kernels.AVX512) {
		if got, want := FMAAVX512(3, 1), float32(3*12); got != want {
			t.Errorf("FMAAVX512(3, 1) = %v, want %v", got, want)
		}
	}
}
