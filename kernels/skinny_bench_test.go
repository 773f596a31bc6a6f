package kernels

import (
	"fmt"
	"math"
	"testing"
)

// BenchmarkSkinny times the skinny products against a 32000×512 matrix (the
// output projection of a decode step over a 32,000-word vocabulary) for
// B = 1…32 rows, under the default route of each ISA: MatVecBatch and
// Gemm(NoTrans, Trans) read the 32000×512 A, Gemm(NoTrans, NoTrans) the
// 512×32000 W, GemmPacked A packed once as op(B) = Aᵀ (PackedB.Pack under
// the ISA). Two matrices are used in turn, 131 MB together, so that each
// call reads its matrix from memory on a machine whose L3 is below 65 MB.
// bytes/s counts the matrix's bytes; GFLOP/s is 2·B·N·K per call. B = 1 is
// also timed as MatVec, the bound MatVecBatch must meet.
func BenchmarkSkinny(b *testing.B) {
	const n, k, m = 32000, 512, 2
	as := make([]Matrix, m)
	ws := make([]Matrix, m)
	ps := make([]PackedB, m)
	for i := range as {
		as[i] = Matrix{Rows: n, Cols: k, Stride: k, Data: ramp(n * k)}
		ws[i] = Matrix{Rows: k, Cols: n, Stride: n, Data: ramp(n * k)}
	}
	var s GemmScratch
	run := func(b *testing.B, bt int, f func(i int)) {
		b.SetBytes(int64(4 * n * k))
		i := 0
		c := startCPU(b)
		for b.Loop() {
			f(i)
			i = (i + 1) % m
		}
		c.stop()
		b.ReportMetric(2*float64(bt*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	}
	for _, bt := range []int{1, 2, 4, 8, 9, 16, 32} {
		x := Matrix{Rows: bt, Cols: k, Stride: k, Data: ramp(bt * k)}
		d := Matrix{Rows: bt, Cols: n, Stride: n, Data: make([]float32, bt*n)}
		b.Run(fmt.Sprintf("B=%d", bt), func(b *testing.B) {
			forEachISA(b, func(b *testing.B) {
				if bt == 1 {
					b.Run("matvec", func(b *testing.B) {
						run(b, bt, func(i int) { MatVec(d.Data, as[i], x.Data) })
					})
				}
				b.Run("matvecbatch", func(b *testing.B) {
					run(b, bt, func(i int) { MatVecBatch(d, as[i], x) })
				})
				b.Run("gemm-nt", func(b *testing.B) {
					run(b, bt, func(i int) { Gemm(NoTrans, Trans, 1, x, as[i], 0, d) })
				})
				b.Run("gemm-nn", func(b *testing.B) {
					run(b, bt, func(i int) { Gemm(NoTrans, NoTrans, 1, x, ws[i], 0, d) })
				})
				b.Run("gemm-packed", func(b *testing.B) {
					for i := range ps {
						ps[i].Pack(Trans, as[i])
					}
					run(b, bt, func(i int) { s.GemmPacked(NoTrans, 1, x, &ps[i], 0, d) })
				})
			})
		})
	}
}

// BenchmarkSkinnySpan places skinnyBytes: MatVecBatch of B rows against one
// hot rows×cols matrix of each span from L2 to beyond L3, through skinnyNT
// (skinnyBytes = 0) and through the route below it (skinnyBytes = MaxInt).
//
//	go test -run '^$' -bench '^BenchmarkSkinnySpan$' ./kernels
func BenchmarkSkinnySpan(b *testing.B) {
	defer func(v int) { skinnyBytes = v }(skinnyBytes)
	for _, cols := range []int{256, 512} {
		for _, mib := range []int{1, 2, 4, 8, 16, 32, 64} {
			rows := mib << 20 / 4 / cols
			a := Matrix{Rows: rows, Cols: cols, Stride: cols, Data: ramp(rows * cols)}
			for _, bt := range []int{4, 8, 16} {
				x := Matrix{Rows: bt, Cols: cols, Stride: cols, Data: ramp(bt * cols)}
				d := Matrix{Rows: bt, Cols: rows, Stride: rows, Data: make([]float32, bt*rows)}
				for _, r := range []struct {
					name  string
					bytes int
				}{{"skinny", 0}, {"below", math.MaxInt}} {
					b.Run(fmt.Sprintf("cols=%d,MiB=%d,B=%d/%s", cols, mib, bt, r.name), func(b *testing.B) {
						skinnyBytes = r.bytes
						b.SetBytes(int64(4 * rows * cols))
						for b.Loop() {
							MatVecBatch(d, a, x)
						}
					})
				}
			}
		}
	}
}
