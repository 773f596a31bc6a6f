package kernels

// Axpy sets y[i] += alpha·x[i]. It panics if len(x) != len(y). x and y must not
// overlap unless they are the same slice.
func Axpy(alpha float32, x, y []float32) {
	if len(x) != len(y) {
		panic(axpyLen{len(x), len(y)})
	}
	axpy(alpha, x, y)
}

// Scale sets x[i] *= alpha.
func Scale(alpha float32, x []float32) { scale(alpha, x) }

// Sum returns Σ x[i], with error ≤ γₙ·Σ|x[i]|; 0 for an empty slice.
func Sum(x []float32) float32 { return sum(x) }

// Max returns the largest element of x: −Inf for an empty slice, NaN if any
// element is NaN, and +0 when the largest elements are zeros of both signs.
func Max(x []float32) float32 { return maxOf(x) }
