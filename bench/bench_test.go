package bench

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// The whole matrix as go test benchmarks, for benchstat (make bench-full):
// Benchmark<Kernel>/<size>/<impl>, with SetBytes so benchstat also shows the
// bandwidth, and the ceilings as BenchmarkCeiling/<level> and /fma.

func benchKernel(b *testing.B, k Kernel) {
	defer kernelsUseDefault()
	for _, n := range Sizes(k, true) {
		c := NewCase(k, n)
		b.Run(strings.ReplaceAll(c.Label, "×", "x"), func(b *testing.B) {
			for _, im := range Impls() {
				run := c.Bind(im)
				if run == nil || (im.Parallel && n < 256) {
					continue
				}
				b.Run(strings.ReplaceAll(im.Name, "/", "-"), func(b *testing.B) {
					defer runtime.GOMAXPROCS(defaultProcs) // run sets it per implementation
					b.SetBytes(c.Bytes)
					run(1)
					b.ResetTimer()
					run(b.N)
				})
			}
		})
	}
}

func BenchmarkDot(b *testing.B)           { benchKernel(b, Dot) }
func BenchmarkMatVec(b *testing.B)        { benchKernel(b, MatVec) }
func BenchmarkMatTVec(b *testing.B)       { benchKernel(b, MatTVec) }
func BenchmarkMatVecBatch(b *testing.B)   { benchKernel(b, MatVecBatch) }
func BenchmarkExp(b *testing.B)           { benchKernel(b, Exp) }
func BenchmarkTanh(b *testing.B)          { benchKernel(b, Tanh) }
func BenchmarkSoftmax(b *testing.B)       { benchKernel(b, Softmax) }
func BenchmarkAdditiveScore(b *testing.B) { benchKernel(b, Additive) }

func BenchmarkCeiling(b *testing.B) {
	_, streams, block, fmas := ceilingLoops()
	for i, size := range cacheSizes() {
		for _, bytes := range []int64{size / 2, 4 * size} {
			if i < 2 && bytes > size {
				continue
			}
			n := max(block, int(bytes/4)/block*block)
			buf := make([]float32, n)
			for j := range buf {
				// Written, so that every page is its own: a buffer never
				// written reads the kernel's shared zero page, which stays
				// in cache, and its first pass measures page faults.
				buf[j] = 1
			}
			for j, f := range streams {
				b.Run(fmt.Sprintf("stream%d/%dKiB", j, 4*n>>10), func(b *testing.B) {
					b.SetBytes(int64(4 * n))
					for b.Loop() {
						sink = f(buf)
					}
				})
			}
		}
	}
	// Each variant of the FMA probe: the FMA peak is the fastest.
	for _, f := range fmas {
		b.Run("fma/"+f.name, func(b *testing.B) {
			sink = f.run(b.N, 1)
			b.ReportMetric(float64(f.flops)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkSteps runs the attention steps: BenchmarkSteps/<step>/<size>/<impl>.
func BenchmarkSteps(b *testing.B) {
	for _, k := range Kernels {
		if isStep(k) {
			b.Run(strings.ReplaceAll(k.String(), " ", "_"), func(b *testing.B) { benchKernel(b, k) })
		}
	}
}
