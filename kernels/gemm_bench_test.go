//go:build unix

package kernels

import (
	"fmt"
	"golang.org/x/sys/unix"
	"math/rand/v2"
	"testing"
)

// gemmBenchShapes are the m×k×n products BenchmarkGemm times: squares and the
// score and context products of attention.
var gemmBenchShapes = []struct {
	name    string
	m, k, n int
	tb      bool
}{
	{"n=64", 64, 64, 64, false},
	{"n=256", 256, 256, 256, false},
	{"n=512", 512, 512, 512, false},
	{"n=1024", 1024, 1024, 1024, false},
	{"QKt=512x64x512", 512, 64, 512, true},
	{"QKt=2048x128x2048", 2048, 128, 2048, true},
}

// BenchmarkGemm times C = A·op(B) on the active ISA (HEED_ISA selects it) and
// reports GFLOP/s (2·m·n·k per call).
func BenchmarkGemm(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, s := range gemmBenchShapes {
		b.Run(s.name, func(b *testing.B) {
			a, _ := testMatrix(rng, s.m, s.k, 0, 0, 0, 0)
			br, bc := s.k, s.n
			if s.tb {
				br, bc = bc, br
			}
			bm, _ := testMatrix(rng, br, bc, 0, 0, 0, 0)
			c, _ := testMatrix(rng, s.m, s.n, 0, 0, 0, 0)
			b.ResetTimer()
			t0 := processCPU()
			for i := 0; i < b.N; i++ {
				Gemm(NoTrans, tr(s.tb), 1, a, bm, 0, c)
			}
			reportGflops(b, t0, 2*float64(s.m)*float64(s.n)*float64(s.k))
		})
	}
}

// processCPU returns the CPU time all threads of the process have used, in ns:
// unlike the wall clock it does not count time spent waiting for a CPU that
// other processes hold.
func processCPU() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts) != nil {
		return -1
	}
	return ts.Nano()
}

// reportGflops reports GFLOP/s of CPU time since t0 for b.N calls of flops
// each ("cpu-GFLOP/s", the figure a busy machine does not distort; with
// several goroutines it is per CPU, not per call), and of wall time.
func reportGflops(b *testing.B, t0 int64, flops float64) {
	cpu := float64(processCPU() - t0)
	b.ReportMetric(flops*float64(b.N)/cpu, "cpu-GFLOP/s")
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkGemmBlocking times n=512 and n=1024 products on one goroutine with
// the active micro-kernel under other blocking sizes kc×mc than the ones the
// caches give: the measurement behind gemmBlocking.
func BenchmarkGemmBlocking(b *testing.B) {
	mk := gemmMicroFor(Active())
	if mk == nil {
		b.Skip("no micro-kernel")
	}
	saved := *mk
	defer func() { *mk = saved }()
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{512, 1024} {
		a, _ := testMatrix(rng, n, n, 0, 0, 0, 0)
		bm, _ := testMatrix(rng, n, n, 0, 0, 0, 0)
		c, _ := testMatrix(rng, n, n, 0, 0, 0, 0)
		for _, kc := range []int{128, 192, 256, 384, 512} {
			for _, mc := range []int{saved.mr * 8, saved.mr * 24, saved.mr * 72} {
				b.Run(fmt.Sprintf("n=%d/kc=%d/mc=%d", n, kc, mc), func(b *testing.B) {
					mk.kc, mk.mc = kc, mc
					t0 := processCPU()
					for i := 0; i < b.N; i++ {
						Gemm(NoTrans, NoTrans, 1, a, bm, 0, c)
					}
					reportGflops(b, t0, 2*float64(n)*float64(n)*float64(n))
				})
			}
		}
	}
}

// BenchmarkGemmPackBT times packing a transposed op(B) (packB with transB) for
// the active micro-kernel: by the 8×8 register transpose (t8) and by the Go
// scatter it replaces (go), side by side. kb×nb is the block packed: keys ×
// d_k of a block of tiled attention, and a kc×nc block of a large product.
func BenchmarkGemmPackBT(b *testing.B) {
	mk := gemmMicroFor(Active())
	if mk == nil {
		b.Skip("no micro-kernel")
	}
	for _, s := range [][2]int{{64, 256}, {128, 256}, {mk.kc, 1024}} {
		kb, nb := s[0], s[1]
		src := make([]float32, nb*kb)
		for i := range src {
			src[i] = float32(i)
		}
		dst := make([]float32, roundUp(nb, mk.nr)*kb)
		for _, v := range []struct {
			name string
			t8   func(dst *float32, ldd int, src *float32, lds int, blocks int)
		}{{"go", nil}, {"t8", mk.transpose8}} {
			if v.name == "t8" && v.t8 == nil {
				continue
			}
			b.Run(fmt.Sprintf("kb=%d,nb=%d/%s", kb, nb, v.name), func(b *testing.B) {
				b.SetBytes(int64(4 * kb * nb))
				for i := 0; i < b.N; i++ {
					packB(dst, true, src, kb, 0, 0, kb, nb, mk.nr, v.t8)
				}
			})
		}
	}
}
