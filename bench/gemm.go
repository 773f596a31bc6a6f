package bench

import (
	"github.com/heedml/heed/kernels"
	"github.com/viterin/vek/vek32"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// GemmShape is one product of the GEMM rows: C (M×N) = A (M×K) · op(B), with
// B stored N×K and transposed when TransB (the score product Q·Kᵀ of
// attention), K×N otherwise.
type GemmShape struct {
	Name    string
	M, K, N int
	TransB  bool
}

// GemmShapes are the squares n = 64…1024 and the attention score products
// 512×64×512 and 2048×128×2048.
var GemmShapes = []GemmShape{
	{"n=64", 64, 64, 64, false},
	{"n=256", 256, 256, 256, false},
	{"n=512", 512, 512, 512, false},
	{"n=1024", 1024, 1024, 1024, false},
	{"512×64×512 QKᵀ", 512, 64, 512, true},
	{"2048×128×2048 QKᵀ", 2048, 128, 2048, true},
}

// Flops returns 2·M·N·K.
func (s GemmShape) Flops() float64 { return 2 * float64(s.M) * float64(s.N) * float64(s.K) }

// GemmPeer is one implementation of C = A·op(B) (α = 1, β = 0).
type GemmPeer struct {
	Name string
	Note string
	// Gemm sets c = a·op(b); ok is false for a shape the peer cannot do.
	Gemm func(transB bool, a, b, c kernels.Matrix) (ok bool)
	// Enter runs before a peer is measured (OpenBLAS: one thread).
	Enter func()
}

// GemmPeers lists heed first, then the peers this build has.
var GemmPeers = []*GemmPeer{
	{Name: "heed", Note: "kernels.Gemm", Gemm: func(transB bool, a, b, c kernels.Matrix) bool {
		tb := kernels.NoTrans
		if transB {
			tb = kernels.Trans
		}
		kernels.Gemm(kernels.NoTrans, tb, 1, a, b, 0, c)
		return true
	}},
	{Name: "gonum", Note: "blas32.Gemm (its goroutines follow GOMAXPROCS)", Gemm: func(transB bool, a, b, c kernels.Matrix) bool {
		tb := blas.NoTrans
		if transB {
			tb = blas.Trans
		}
		blas32.Gemm(blas.NoTrans, tb, 1, gen32(a), gen32(b), 0, gen32(c))
		return true
	}},
	{Name: "vek", Note: "vek32.MatMul_Into, B as is only (its goroutines follow GOMAXPROCS)", Gemm: func(transB bool, a, b, c kernels.Matrix) bool {
		if transB || !dense(a) || !dense(b) || !dense(c) {
			return false
		}
		vek32.MatMul_Into(c.Data, a.Data, b.Data, a.Cols)
		return true
	}},
}
