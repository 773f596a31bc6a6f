package kernels_test

import (
	"fmt"
	"math"

	"github.com/heedml/heed/kernels"
)

func ExampleGemm() {
	// Scores of two queries against three keys at once: S = Q·Kᵀ.
	q := kernels.Matrix{Rows: 2, Cols: 2, Stride: 2, Data: []float32{
		1, 0,
		0, 2,
	}}
	k := kernels.Matrix{Rows: 3, Cols: 2, Stride: 2, Data: []float32{
		1, 1,
		2, 0,
		0, 3,
	}}
	s := kernels.Matrix{Rows: 2, Cols: 3, Stride: 3, Data: make([]float32, 6)}
	kernels.Gemm(kernels.NoTrans, kernels.Trans, 1, q, k, 0, s) // β = 0: s is not read
	fmt.Println(s.Data[:3], s.Data[3:])
	// Output: [1 2 0] [2 0 6]
}

func ExampleGemmScratch_GemmPacked() {
	// Keys packed once (transposed, for Q·Kᵀ), then multiplied by several
	// blocks of queries through one scratch: neither call copies the keys.
	k := kernels.Matrix{Rows: 3, Cols: 2, Stride: 2, Data: []float32{
		1, 1,
		2, 0,
		0, 3,
	}}
	var kt kernels.PackedB
	kt.Pack(kernels.Trans, k) // op(B) = Kᵀ, 2×3
	var scratch kernels.GemmScratch
	s := kernels.Matrix{Rows: 1, Cols: 3, Stride: 3, Data: make([]float32, 3)}
	for _, query := range [][]float32{{1, 0}, {0, 2}} {
		q := kernels.Matrix{Rows: 1, Cols: 2, Stride: 2, Data: query}
		scratch.GemmPacked(kernels.NoTrans, 0.5, q, &kt, 0, s) // α = 0.5 scales the scores
		fmt.Println(s.Data)
	}
	// Output:
	// [0.5 1 0]
	// [1 0 3]
}

func ExampleOnlineSoftmax() {
	// The softmax of one row of scores taken in two blocks, as tiled
	// attention takes a query's keys: each block's weights are relative to
	// the running maximum, and what came before is rescaled when it rises.
	x := []float32{1, 2, 3, 4}
	m, l := kernels.OnlineSoftmax(x[:2], float32(math.Inf(-1))) // x[:2] = e^(x−2)
	m1, add := kernels.OnlineSoftmax(x[2:], m)
	f := float32(math.Exp(float64(m - m1))) // the max rose from 2 to 4
	kernels.Scale(x[:2], f, x[:2])
	m, l = m1, l*f+add
	kernels.Scale(x, 1/l, x)
	fmt.Printf("max %v weights %.4f\n", m, x)
	// Output: max 4 weights [0.0321 0.0871 0.2369 0.6439]
}

func ExampleOnlineSoftmaxBand() {
	// Three queries against a block of three keys under a causal mask:
	// with d = 1, query i sees its first i+1 keys, and the scores past them
	// (here NaN: they do not enter the softmax) become 0.
	nan := float32(math.NaN())
	x := kernels.Matrix{Rows: 3, Cols: 3, Stride: 3, Data: []float32{
		0, nan, nan,
		0, 0, nan,
		0, 0, 0,
	}}
	ninf := float32(math.Inf(-1))
	m := []float32{ninf, ninf, ninf} // no block before this one
	sum := make([]float32, 3)
	kernels.OnlineSoftmaxBand(x, 1, m, sum)
	for i := range 3 {
		row := x.Row(i)
		kernels.Scale(row, 1/sum[i], row) // the last block: divide by the sum
		fmt.Printf("%.4f\n", row)
	}
	// Output:
	// [1.0000 0.0000 0.0000]
	// [0.5000 0.5000 0.0000]
	// [0.3333 0.3333 0.3333]
}

func ExampleLogSoftmax() {
	// Log-probabilities for a decoder's output layer.
	logits := []float32{0, 0, math.Ln2}
	logp := make([]float32, 3)
	kernels.LogSoftmax(logp, logits)
	fmt.Printf("%.4f\n", logp) // ln(1/4), ln(1/4), ln(2/4)
	// Output: [-1.3863 -1.3863 -0.6931]
}

func ExampleTopK() {
	// The three best continuations of a beam.
	logp := []float32{-2.3, -0.1, -4.0, -0.7, -0.7}
	idx, val := make([]int, 3), make([]float32, 3)
	kernels.TopK(idx, val, logp)
	fmt.Println(idx, val) // ties: the lower index first
	// Output: [1 3 4] [-0.1 -0.7 -0.7]
}
