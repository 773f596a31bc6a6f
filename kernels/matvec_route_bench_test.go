package kernels

import (
	"fmt"
	"testing"
)

// BenchmarkMatVecBatchRoute places MatVecBatch's switch to Gemm: for each
// shape of A (rows×cols) and batch, the batch kernel (matVecBatch) and Gemm
// side by side under each ISA. kernels/DESIGN.md has the measurements.
func BenchmarkMatVecBatchRoute(b *testing.B) {
	for _, sh := range [][2]int{{64, 64}, {256, 256}, {512, 256}, {512, 512}, {1024, 1024}} {
		rows, cols := sh[0], sh[1]
		for _, batch := range []int{2, 8, 16, 32, 64, 96, 128, 192, 256, 512, 1024} {
			a := Matrix{Rows: rows, Cols: cols, Stride: cols, Data: ramp(rows * cols)}
			x := Matrix{Rows: batch, Cols: cols, Stride: cols, Data: ramp(batch * cols)}
			d := Matrix{Rows: batch, Cols: rows, Stride: rows, Data: make([]float32, batch*rows)}
			b.Run(fmt.Sprintf("%dx%d/B=%d", rows, cols, batch), func(b *testing.B) {
				forEachISA(b, func(b *testing.B) {
					if gemmMicroFor(active) == nil {
						b.Skip("no micro-kernel")
					}
					for _, route := range []string{"kernel", "gemm"} {
						b.Run(route, func(b *testing.B) {
							c := startCPU(b)
							for b.Loop() {
								if route == "gemm" {
									Gemm(NoTrans, Trans, 1, x, a, 0, d)
								} else {
									matVecBatch(d.Data, d.Stride, a.Data, a.Stride, x.Data, x.Stride, rows, cols, batch)
								}
							}
							c.stop()
						})
					}
				})
			})
		}
	}
}
