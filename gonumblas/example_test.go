package gonumblas_test

import (
	"fmt"

	"github.com/heedml/heed/gonumblas"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/gonum"
)

// A float32 program written against gonum's blas32 runs on heed after one
// line, blas32.Use(gonumblas.Implementation{}); nothing else changes.
func Example() {
	program := func() {
		a := blas32.General{Rows: 2, Cols: 3, Stride: 3, Data: []float32{1, 2, 3, 4, 5, 6}}
		b := blas32.General{Rows: 3, Cols: 2, Stride: 2, Data: []float32{1, 0, 0, 1, 1, 1}}
		c := blas32.General{Rows: 2, Cols: 2, Stride: 2, Data: make([]float32, 4)}
		x := blas32.Vector{N: 3, Inc: 1, Data: []float32{1, 1, 1}}
		y := blas32.Vector{N: 2, Inc: 1, Data: make([]float32, 2)}

		blas32.Gemv(blas.NoTrans, 1, a, x, 0, y)               // y = A·x
		blas32.Gemm(blas.NoTrans, blas.NoTrans, 1, a, b, 0, c) // C = A·B
		fmt.Println("A·x =", y.Data, " A·B =", c.Data, " x·x =", blas32.Dot(x, x))
	}

	program() // gonum's own float32 BLAS

	blas32.Use(gonumblas.Implementation{})
	defer blas32.Use(gonum.Implementation{})
	program() // the same program on heed's kernels

	// Output:
	// A·x = [6 15]  A·B = [4 5 10 11]  x·x = 3
	// A·x = [6 15]  A·B = [4 5 10 11]  x·x = 3
}
