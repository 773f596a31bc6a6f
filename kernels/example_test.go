package kernels_test

import (
	"fmt"
	"math"

	"github.com/heedml/heed/kernels"
)

func ExampleDot() {
	x := []float32{1, 2, 3}
	y := []float32{4, 5, 6}
	fmt.Println(kernels.Dot(x, y))
	// Output: 32
}

func ExampleMatVec() {
	// Three encoder states of size 2, one per row, scored against a query.
	keys := kernels.Matrix{Rows: 3, Cols: 2, Stride: 2, Data: []float32{
		1, 0,
		0, 1,
		1, 1,
	}}
	query := []float32{0.5, 2}
	scores := make([]float32, 3)
	kernels.MatVec(scores, keys, query)
	fmt.Println(scores)
	// Output: [0.5 2 2.5]
}

func ExampleSoftmax() {
	scores := []float32{1, 2, 3, 4}
	kernels.Softmax(scores, scores) // in place
	fmt.Printf("%.4f\n", scores)
	// Output: [0.0321 0.0871 0.2369 0.6439]
}

func ExampleMatTVec() {
	// The context vector Σ α_s·h̄_s: the weighted sum of the rows.
	values := kernels.Matrix{Rows: 2, Cols: 3, Stride: 3, Data: []float32{
		1, 2, 3,
		10, 20, 30,
	}}
	weights := []float32{0.75, 0.25}
	context := make([]float32, 3)
	kernels.MatTVecAdd(context, values, weights)
	fmt.Println(context)
	// Output: [3.25 6.5 9.75]
}

func ExampleSoftmaxMatTVecAdd() {
	// One attention step after the scores: weights and context in one call.
	values := kernels.Matrix{Rows: 2, Cols: 3, Stride: 3, Data: []float32{
		1, 2, 3,
		10, 20, 30,
	}}
	scores := []float32{0, float32(math.Log(3))} // weights 1/4 and 3/4
	context := make([]float32, 3)
	kernels.SoftmaxMatTVecAdd(context, values, scores)
	fmt.Printf("%.4f %.4f\n", scores, context)
	// Output: [0.2500 0.7500] [7.7500 15.5000 23.2500]
}

func ExampleDotSoftmaxMatTVec() {
	// A Luong dot step whose values are the keys, in two streaming calls.
	keys := kernels.Matrix{Rows: 2, Cols: 2, Stride: 2, Data: []float32{
		0, 0,
		float32(math.Log(3)), 0, // its score is ln 3: weights 1/4 and 3/4
	}}
	h := []float32{1, 5}
	scores, context := make([]float32, 2), make([]float32, 2)
	st := kernels.SoftmaxState{Max: float32(math.Inf(-1))}
	for r := range 2 { // one row per call: the state carries over
		row := kernels.Matrix{Rows: 1, Cols: 2, Stride: 2, Data: keys.Data[2*r : 2*r+2]}
		kernels.DotSoftmaxMatTVec(context, scores[r:r+1], row, h, &st)
	}
	kernels.Softmax(scores, scores) // the weights
	kernels.Scale(context, 1/st.Sum, context)
	fmt.Printf("%.4f %.4f\n", scores, context)
	// Output: [0.2500 0.7500] [0.8240 0.0000]
}
