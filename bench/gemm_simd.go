//go:build goexperiment.simd && amd64

package bench

import (
	"github.com/ajroetker/go-highway/hwy/contrib/matmul"
	"github.com/heedml/heed/kernels"
)

func init() {
	GemmPeers = append(GemmPeers, &GemmPeer{
		Name: "highway", Note: "matmul.PackedMatMul (B as is), matmul.MatMulKLastBlocked (Bᵀ); dense matrices only",
		Gemm: func(transB bool, a, b, c kernels.Matrix) bool {
			if !dense(a) || !dense(b) || !dense(c) {
				return false
			}
			if transB {
				matmul.MatMulKLastBlocked(a.Data, b.Data, c.Data, c.Rows, c.Cols, a.Cols)
			} else {
				matmul.PackedMatMul(a.Data, b.Data, c.Data, c.Rows, c.Cols, a.Cols)
			}
			return true
		},
	})
}
