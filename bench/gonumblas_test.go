package bench

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/heedml/heed/gonumblas"
	"github.com/heedml/heed/kernels"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// BenchmarkGonumBLAS runs gonum's float32 BLAS and gonumblas (heed behind
// gonum's interface) side by side on the same arguments, single-threaded:
// BenchmarkGonumBLAS/<routine>/<shape>/{gonum,heed}. Besides sec/op each row
// reports cpu-ns/op, the process's CPU time per call, which a busy machine
// disturbs less (see cpuTime); Sgemm also reports GFLOP/s from it.
func BenchmarkGonumBLAS(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // gonum's Sgemm would use goroutines
	impls := []struct {
		name string
		impl blas.Float32
	}{{"gonum", gonum.Implementation{}}, {"heed", gonumblas.Implementation{}}}
	r := rand.New(rand.NewPCG(1, 2))
	fill := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.Float64()*2 - 1)
		}
		return v
	}
	for _, n := range []int{256, 4096} {
		x, y := fill(n), fill(n)
		for _, im := range impls {
			b.Run(fmt.Sprintf("Sdot/n=%d/%s", n, im.name), func(b *testing.B) {
				b.SetBytes(int64(8 * n))
				cpuLoop(b, func() { sink = im.impl.Sdot(n, x, 1, y, 1) })
			})
		}
	}
	const m, n = 256, 256
	a, x, y := fill(m*n), fill(n), fill(m)
	for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
		for _, im := range impls {
			b.Run(fmt.Sprintf("Sgemv/%c/%dx%d/%s", tA, m, n, im.name), func(b *testing.B) {
				b.SetBytes(4 * m * n)
				cpuLoop(b, func() { im.impl.Sgemv(tA, m, n, 1, a, n, x, 1, 0, y, 1) })
			})
		}
	}
	for _, im := range impls {
		b.Run(fmt.Sprintf("Sger/%dx%d/%s", m, n, im.name), func(b *testing.B) {
			b.SetBytes(8 * m * n)
			cpuLoop(b, func() { im.impl.Sger(m, n, 1e-3, y, 1, x, 1, a, n) })
		})
	}
	const s = 512
	ga, gb, gc := fill(s*s), fill(s*s), make([]float32, s*s)
	for _, tB := range []blas.Transpose{blas.NoTrans, blas.Trans} {
		for _, im := range impls {
			b.Run(fmt.Sprintf("Sgemm/N%c/%dx%dx%d/%s", tB, s, s, s, im.name), func(b *testing.B) {
				ns := cpuLoop(b, func() { im.impl.Sgemm(blas.NoTrans, tB, s, s, s, 1, ga, s, gb, s, 0, gc, s) })
				b.ReportMetric(2*s*s*s/ns, "GFLOP/s")
			})
		}
	}
}

// BenchmarkGonumBLASSmall measures the smallest products, where fixed costs
// decide: gonum, the adapter, and kernels.Gemm called directly (the adapter's
// route above its size threshold), side by side, single-threaded:
// BenchmarkGonumBLASSmall/<routine>/s=<s>/{gonum,heed,kernels}.
func BenchmarkGonumBLASSmall(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	r := rand.New(rand.NewPCG(3, 4))
	fill := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.Float64()*2 - 1)
		}
		return v
	}
	ref, adapter := gonum.Implementation{}, gonumblas.Implementation{}
	for _, s := range []int{2, 3, 4, 6, 8, 16} {
		a, bm, c, x, y := fill(s*s), fill(s*s), fill(s*s), fill(s), fill(s)
		mat := func(d []float32) kernels.Matrix { return kernels.Matrix{Rows: s, Cols: s, Stride: s, Data: d} }
		for _, im := range []struct {
			name string
			f    func()
		}{
			{"gonum", func() { ref.Sgemm(blas.NoTrans, blas.NoTrans, s, s, s, 1, a, s, bm, s, 0, c, s) }},
			{"heed", func() { adapter.Sgemm(blas.NoTrans, blas.NoTrans, s, s, s, 1, a, s, bm, s, 0, c, s) }},
			{"kernels", func() { kernels.Gemm(kernels.NoTrans, kernels.NoTrans, 1, mat(a), mat(bm), 0, mat(c)) }},
		} {
			b.Run(fmt.Sprintf("Sgemm/s=%d/%s", s, im.name), func(b *testing.B) { cpuLoop(b, im.f) })
		}
		for _, im := range []struct {
			name string
			impl blas.Float32
		}{{"gonum", ref}, {"heed", adapter}} {
			b.Run(fmt.Sprintf("Sgemv-beta/s=%d/%s", s, im.name), func(b *testing.B) {
				cpuLoop(b, func() { im.impl.Sgemv(blas.NoTrans, s, s, 1, a, s, x, 1, 0.5, y, 1) })
			})
			b.Run(fmt.Sprintf("Sgemv/s=%d/%s", s, im.name), func(b *testing.B) {
				cpuLoop(b, func() { im.impl.Sgemv(blas.NoTrans, s, s, 1, a, s, x, 1, 0, y, 1) })
			})
		}
	}
}

// cpuLoop runs f b.N times and reports, and returns, the process CPU time per
// call in nanoseconds (the wall-clock time where the OS gives none).
func cpuLoop(b *testing.B, f func()) float64 {
	t0, ok := cpuTime()
	for b.Loop() {
		f()
	}
	t1, _ := cpuTime()
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	if ok {
		ns = float64(t1-t0) / float64(b.N)
	}
	b.ReportMetric(ns, "cpu-ns/op")
	return ns
}
