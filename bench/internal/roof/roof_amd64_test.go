package roof

import (
	"slices"
	"testing"

	"github.com/heedml/heed/kernels"
)

// Every streaming loop must read every element exactly once.
func TestStreamLoops(t *testing.T) {
	loops := []struct {
		name  string
		isa   kernels.ISA
		f     func([]float32) float32
		block int
	}{
		{"StreamAVX2", kernels.AVX2, StreamAVX2, 64}, {"StreamAVX512", kernels.AVX512, StreamAVX512, 128},
		{"Stream4AVX2", kernels.AVX2, Stream4AVX2, 64}, {"Stream4AVX512", kernels.AVX512, Stream4AVX512, 128},
	}
	for _, l := range loops {
		if !slices.Contains(kernels.Supported(), l.isa) {
			t.Logf("%s: %v not supported here", l.name, l.isa)
			continue
		}
		for _, blocks := range []int{0, 1, 2, 3, 5, 64} {
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
}

// Each FMA loop runs iters × Accs FMAs of Lanes lanes, each adding a·a: the
// sum of all lanes of its accumulators is the count of lane-FMAs times a²
// (exact: every partial sum is an integer multiple of a² below 2²⁴).
func TestFMALoops(t *testing.T) {
	avx2 := slices.Contains(kernels.Supported(), kernels.AVX2)
	avx512 := slices.Contains(kernels.Supported(), kernels.AVX512)
	names := map[string]bool{}
	for _, f := range FMAs {
		if names[f.Name] {
			t.Errorf("%s listed twice", f.Name)
		}
		names[f.Name] = true
		// Two registers hold the multiplicands: AVX2 has 16, AVX-512 32.
		if regs := map[bool]int{false: 16, true: 32}[f.AVX512]; f.Accs+2 > regs {
			t.Errorf("%s: %d accumulators and 2 multiplicands in %d registers", f.Name, f.Accs, regs)
		}
		if f.Lanes == 16 && !f.AVX512 {
			t.Errorf("%s: ZMM without AVX-512", f.Name)
		}
		if f.FlopsPerIter() != 2*f.Lanes*f.Accs {
			t.Errorf("%s: FlopsPerIter %d", f.Name, f.FlopsPerIter())
		}
		if !avx2 || f.AVX512 && !avx512 {
			t.Logf("%s: not supported here", f.Name)
			continue
		}
		for _, iters := range []int{0, 1, 3, 1000} {
			for _, a := range []float32{1, 0.5, 2} {
				want := float32(iters*f.Accs*f.Lanes) * a * a
				if got := f.Run(iters, a); got != want {
					t.Errorf("%s.Run(%d, %v) = %v, want %v", f.Name, iters, a, got, want)
				}
			}
		}
	}
	// The widths and counts the peak needs: YMM up to 14 accumulators on
	// AVX2, YMM and ZMM up to 30 on AVX-512.
	for _, n := range []string{"ymm×8", "ymm×12", "ymm×14", "ymm×16", "ymm×24", "ymm×30", "zmm×8", "zmm×12", "zmm×16", "zmm×24", "zmm×30"} {
		if !names[n] {
			t.Errorf("no %s loop", n)
		}
	}
}

// BenchmarkFMA times each FMA loop this CPU runs (GFLOP/s of wall time).
func BenchmarkFMA(b *testing.B) {
	for _, f := range FMAs {
		if !slices.Contains(kernels.Supported(), kernels.AVX2) || f.AVX512 && !slices.Contains(kernels.Supported(), kernels.AVX512) {
			continue
		}
		b.Run(f.Name, func(b *testing.B) {
			const iters = 1000
			for b.Loop() {
				sink = f.Run(iters, 1)
			}
			b.ReportMetric(float64(iters*f.FlopsPerIter())*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

var sink float32
