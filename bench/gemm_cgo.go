//go:build heedcgo

package bench

/*
#cgo LDFLAGS: -lopenblas
#include <cblas.h>
*/
import "C"

import "github.com/heedml/heed/kernels"

func init() {
	oneThread := func() { C.openblas_set_num_threads(1) }
	GemmPeers = append(GemmPeers, &GemmPeer{
		Name: "openblas", Note: "cblas_sgemm(RowMajor, NoTrans, NoTrans|Trans), one thread", Enter: oneThread,
		Gemm: func(transB bool, a, b, c kernels.Matrix) bool {
			tb := uint32(C.CblasNoTrans)
			if transB {
				tb = C.CblasTrans
			}
			C.cblas_sgemm(C.CblasRowMajor, C.CblasNoTrans, tb, C.blasint(c.Rows), C.blasint(c.Cols), C.blasint(a.Cols), 1,
				fp(a.Data), C.blasint(max(a.Stride, 1)), fp(b.Data), C.blasint(max(b.Stride, 1)), 0, fp(c.Data), C.blasint(max(c.Stride, 1)))
			return true
		},
	})
}
