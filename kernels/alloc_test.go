package kernels

import (
	"math"
	"testing"

	"github.com/heedml/heed/internal/allocs"
)

// TestNoAllocs checks that no kernel allocates, under every ISA.
func TestNoAllocs(t *testing.T) {
	const n = 300
	x, y, z := make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(i%13)-6, float32(i%7)/7
	}
	a := Matrix{Rows: 20, Cols: 15, Stride: 15, Data: x[:300]}
	xb := Matrix{Rows: 4, Cols: 15, Stride: 15, Data: y[:60]}
	db := Matrix{Rows: 4, Cols: 20, Stride: 20, Data: z[:80]}
	calls := map[string]func(){
		"Dot":            func() { Dot(x, y) },
		"Axpy":           func() { Axpy(0.5, x, z) },
		"Scale":          func() { Scale(z, 0.5, z) },
		"Sum":            func() { Sum(x) },
		"Max":            func() { Max(x) },
		"MatVec":         func() { MatVec(z[:20], a, y[:15]) },
		"MatTVec":        func() { MatTVecAdd(z[:15], a, y[:20]) },
		"MatVecBatch":    func() { MatVecBatch(db, a, xb) },
		"Exp":            func() { Exp(z, y) },
		"Tanh":           func() { Tanh(z, y) },
		"Softmax":        func() { Softmax(z, x) },
		"SoftmaxMatTVec": func() { copy(z[:20], x); SoftmaxMatTVecAdd(y[:15], a, z[:20]) },
		"DotSoftmaxMatTVec": func() {
			st := SoftmaxState{Max: float32(math.Inf(-1))}
			DotSoftmaxMatTVec(y[:15], z[:20], a, y[15:30], &st)
		},
		"DotSoftmaxMatTVec/vectors": func() {
			st := SoftmaxState{Max: float32(math.Inf(-1))}
			DotSoftmaxMatTVec(y[:16], z[:17], Matrix{Rows: 17, Cols: 16, Stride: 16, Data: x[:272]}, y[16:32], &st)
		},
		"AdditiveScore": func() { AdditiveScore(z[:20], a, y[:15], y[15:30]) },
	}
	forEachISA(t, func(t *testing.T) {
		for name, f := range calls {
			if got := allocs.Count(10, f); got != 0 {
				t.Errorf("%s allocates %d times in the measured calls", name, got)
			}
		}
	})
}

// TestStackOperands checks that the kernels keep callers' stack buffers on the
// stack: every kernel stub is go:noescape, and the dispatch must not lose that
// (a kernel called through a function value makes its arguments escape).
func TestStackOperands(t *testing.T) {
	skipSparse(t)
	var sink32 float32
	calls := map[string]func(){
		"elementwise": func() {
			var a, b, c [64]float32
			Add(a[:], b[:], c[:])
			Sub(a[:], b[:], c[:])
			Mul(a[:], b[:], c[:])
			Div(a[:], b[:], c[:])
			Scale(a[:], 2, b[:])
			AddScaled(a[:], 2, b[:], c[:])
			AddConst(a[:], 2, b[:])
			sink32 = a[1]
		},
		"activations": func() {
			var a, b [64]float32
			Exp(a[:], b[:])
			Tanh(a[:], b[:])
			Sigmoid(a[:], b[:])
			Softmax(a[:], b[:])
			sink32 = a[1]
		},
		"DotSoftmaxMatTVec": func() {
			var k [32 * 16]float32
			var ctx, h [16]float32
			var scores [32]float32
			st := SoftmaxState{Max: float32(math.Inf(-1))}
			DotSoftmaxMatTVec(ctx[:], scores[:], Matrix{Rows: 32, Cols: 16, Stride: 16, Data: k[:]}, h[:], &st)
			sink32 = ctx[1]
		},
		"DotSoftmaxMatTVecQ8Q8": func() {
			var k [32]Q8Block
			var hq [1]Q8Block
			var ctx [32]float32
			var scores [32]float32
			st := SoftmaxState{Max: float32(math.Inf(-1))}
			m := StoredOf(32, 32, 1, k[:])
			DotSoftmaxMatTVecQ8Q8(ctx[:], scores[:], m, m, hq[:], &st)
			sink32 = ctx[1]
		},
	}
	forEachISA(t, func(t *testing.T) {
		for name, f := range calls {
			if got := allocs.Count(10, f); got != 0 {
				t.Errorf("%s allocates %d times with stack operands", name, got)
			}
		}
	})
	_ = sink32
}
