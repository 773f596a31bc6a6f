package kernels

import (
	"fmt"
	"math"
	"runtime"
	"testing"
)

// Benchmarks of the linear-algebra kernels (Dot and MatVec are in
// bench_test.go). Each sets bytes/s to the bytes it reads plus those it writes,
// and runs beside the plain Go loop a user would write.

// benchVec runs a vector kernel at every vecSizes length: the Go loop, then
// the kernel under every ISA.
func benchVec(b *testing.B, bytesPerElem int, goloop, kernel func(n int) func()) {
	for _, n := range vecSizes {
		b.Run(fmt.Sprint("n=", n), func(b *testing.B) {
			b.Run("goloop", func(b *testing.B) {
				f := goloop(n)
				b.SetBytes(int64(bytesPerElem * n))
				c := startCPU(b)
				for b.Loop() {
					f()
				}
				c.stop()
			})
			forEachISA(b, func(b *testing.B) {
				f := kernel(n)
				b.SetBytes(int64(bytesPerElem * n))
				c := startCPU(b)
				for b.Loop() {
					f()
				}
				c.stop()
			})
		})
	}
}

func BenchmarkAxpy(b *testing.B) {
	const alpha = 1e-3
	benchVec(b, 12,
		func(n int) func() {
			x, y := ramp(n), ramp(n)
			return func() {
				for i := range x {
					y[i] += alpha * x[i]
				}
			}
		},
		func(n int) func() {
			x, y := ramp(n), ramp(n)
			return func() { Axpy(alpha, x, y) }
		})
}

func BenchmarkScale(b *testing.B) {
	const alpha = -1 // keeps the values bounded however long it runs
	benchVec(b, 8,
		func(n int) func() {
			x := ramp(n)
			return func() {
				for i := range x {
					x[i] *= alpha
				}
			}
		},
		func(n int) func() {
			x := ramp(n)
			return func() { Scale(x, alpha, x) }
		})
}

func BenchmarkSum(b *testing.B) {
	benchVec(b, 4,
		func(n int) func() {
			x := ramp(n)
			return func() {
				var s float32
				for _, v := range x {
					s += v
				}
				sink = s
			}
		},
		func(n int) func() {
			x := ramp(n)
			return func() { sink = Sum(x) }
		})
}

func BenchmarkMax(b *testing.B) {
	benchVec(b, 4,
		func(n int) func() {
			x := ramp(n)
			return func() {
				m := x[0]
				for _, v := range x {
					if v > m {
						m = v
					}
				}
				sink = m
			}
		},
		func(n int) func() {
			x := ramp(n)
			return func() { sink = Max(x) }
		})
}

func BenchmarkMatTVec(b *testing.B) {
	for _, n := range matSizes {
		a := Matrix{Rows: n, Cols: n, Stride: n, Data: ramp(n * n)}
		x, dst := ramp(n), make([]float32, n)
		for i := range x {
			x[i] *= 1e-3 // dst grows slowly
		}
		b.Run(fmt.Sprintf("%dx%d", n, n), func(b *testing.B) {
			b.Run("goloop", func(b *testing.B) {
				b.SetBytes(int64(4 * n * n))
				c := startCPU(b)
				for b.Loop() {
					for r, w := range x {
						row := a.Row(r)
						for c := range dst {
							dst[c] += w * row[c]
						}
					}
				}
				c.stop()
			})
			forEachISA(b, func(b *testing.B) {
				b.SetBytes(int64(4 * n * n))
				c := startCPU(b)
				for b.Loop() {
					MatTVecAdd(dst, a, x)
				}
				c.stop()
			})
		})
	}
}

// matVecBatchSize is the number of vectors in the MatVecBatch benchmarks.
const matVecBatchSize = 8

func BenchmarkMatVecBatch(b *testing.B) {
	for _, n := range matSizes {
		const nb = matVecBatchSize
		a := Matrix{Rows: n, Cols: n, Stride: n, Data: ramp(n * n)}
		x := Matrix{Rows: nb, Cols: n, Stride: n, Data: ramp(nb * n)}
		d := Matrix{Rows: nb, Cols: n, Stride: n, Data: make([]float32, nb*n)}
		// Bytes of A times the batch: the traffic of nb separate MatVecs.
		bytes := int64(4 * n * n * nb)
		b.Run(fmt.Sprintf("%dx%dx%d", n, n, nb), func(b *testing.B) {
			b.Run("goloop", func(b *testing.B) {
				b.SetBytes(bytes)
				c := startCPU(b)
				for b.Loop() {
					for j := 0; j < nb; j++ {
						dst, xj := d.Row(j), x.Row(j)
						for r := range dst {
							dst[r] = dotLoop(a.Row(r), xj)
						}
					}
				}
				c.stop()
			})
			b.Run("matvec-each", func(b *testing.B) {
				b.SetBytes(bytes)
				c := startCPU(b)
				for b.Loop() {
					for j := 0; j < nb; j++ {
						MatVec(d.Row(j), a, x.Row(j))
					}
				}
				c.stop()
			})
			forEachISA(b, func(b *testing.B) {
				b.SetBytes(bytes)
				c := startCPU(b)
				for b.Loop() {
					MatVecBatch(d, a, x)
				}
				c.stop()
			})
		})
	}
}

// cpuClock measures the CPU time of the benchmark's thread, which time slicing
// on a busy machine does not inflate as it does the wall time: its
// "cpu-ns/op" metric is the one to compare when other work shares the cores.
type cpuClock struct {
	b     *testing.B
	start int64
}

// startCPU locks the benchmark to its thread and starts the clock; call it
// just before the b.Loop loop and stop just after.
func startCPU(b *testing.B) cpuClock {
	runtime.LockOSThread()
	return cpuClock{b, threadCPU()}
}

func (c cpuClock) stop() {
	end := threadCPU()
	runtime.UnlockOSThread()
	if c.start >= 0 && end >= 0 && c.b.N > 0 {
		c.b.ReportMetric(float64(end-c.start)/float64(c.b.N), "cpu-ns/op")
	}
}

// shapes are the rows×cols of the MatVecShape and MatTVecShape benchmarks:
// square ones in cache, then 16 MiB and 64 MiB ones from memory with short and
// long rows.
var shapes = [][2]int{{64, 64}, {256, 256}, {1024, 1024}, {8192, 512}, {512, 8192}, {4096, 4096}}

// benchShapes runs f (MatVec or MatTVec) under every ISA at every shape, with
// bytes/s counting the bytes of A, beside Sum over the same bytes (the
// streaming-read ceiling).
func benchShapes(b *testing.B, f func(a Matrix, x, y []float32)) {
	for _, sh := range shapes {
		r, c := sh[0], sh[1]
		a := Matrix{Rows: r, Cols: c, Stride: c, Data: ramp(r * c)}
		x, y := ramp(c), ramp(r)
		for i := range x {
			x[i] *= 1e-3
		}
		for i := range y {
			y[i] *= 1e-3
		}
		b.Run(fmt.Sprintf("%dx%d", r, c), func(b *testing.B) {
			// The streaming-read ceiling: Sum over the same bytes.
			b.Run("sum", func(b *testing.B) {
				b.SetBytes(int64(4 * r * c))
				cl := startCPU(b)
				for b.Loop() {
					sink = Sum(a.Data)
				}
				cl.stop()
			})
			forEachISA(b, func(b *testing.B) {
				b.SetBytes(int64(4 * r * c))
				cl := startCPU(b)
				for b.Loop() {
					f(a, x, y)
				}
				cl.stop()
			})
		})
	}
}

func BenchmarkMatVecShape(b *testing.B) {
	benchShapes(b, func(a Matrix, x, y []float32) { MatVec(y, a, x) })
}

func BenchmarkMatTVecShape(b *testing.B) {
	benchShapes(b, func(a Matrix, x, y []float32) { MatTVecAdd(x, a, y) })
}

// BenchmarkDotSoftmaxMatTVec is a dot-product attention step over A (keys and
// values) in one streaming pass, under each of its kernels, beside the three
// kernels it replaces (MatVec, Softmax, MatTVec), which read A twice; bytes/s
// counts A once. An R×C×M shape takes M matrices in turn, so that each comes
// from memory (M·R·C·4 bytes exceed the L3).
func BenchmarkDotSoftmaxMatTVec(b *testing.B) {
	for _, sh := range [][3]int{{512, 128, 1}, {2048, 256, 1}, {8192, 256, 1}, {8192, 512, 1}, {2048, 1024, 1}, {64, 4096, 1}, {1024, 256, 1}, {1024, 256, 48}, {2048, 256, 24}, {8192, 512, 6}, {32768, 128, 6}} {
		r, c, m := sh[0], sh[1], sh[2]
		as := make([]Matrix, m)
		for i := range as {
			as[i] = Matrix{Rows: r, Cols: c, Stride: c, Data: ramp(r * c)}
		}
		h, ctx, w := ramp(c), make([]float32, c), make([]float32, r)
		name := fmt.Sprintf("%dx%d", r, c)
		if m > 1 {
			name += fmt.Sprintf("x%d", m)
		}
		b.Run(name, func(b *testing.B) {
			forEachISA(b, func(b *testing.B) {
				fused := func(b *testing.B) {
					b.SetBytes(int64(4 * r * c))
					i := 0
					for b.Loop() {
						clear(ctx)
						st := SoftmaxState{Max: float32(math.Inf(-1))}
						DotSoftmaxMatTVec(ctx, w, as[i], h, &st)
						i = (i + 1) % m
					}
				}
				b.Run("fused", fused)
				b.Run("kernel", func(b *testing.B) { forEachDotSoftmaxKernel(b, fused) })
				b.Run("separate", func(b *testing.B) {
					b.SetBytes(int64(4 * r * c))
					i := 0
					for b.Loop() {
						MatVec(w, as[i], h)
						Softmax(w, w)
						clear(ctx)
						MatTVecAdd(ctx, as[i], w)
						i = (i + 1) % m
					}
				})
			})
		})
	}
}
