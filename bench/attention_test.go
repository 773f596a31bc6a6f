package bench

import (
	"fmt"
	"math"
	"testing"

	"github.com/heedml/heed/attention"
	"github.com/heedml/heed/kernels"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// gonumStep is the straightforward gonum Luong dot step: scores = H̄·h with
// blas32 Sgemv, a math.Exp softmax, and c = H̄ᵀα with Sgemv transposed.
func gonumStep(w, c []float32, keys blas32.General, h []float32) {
	blas32.Gemv(blas.NoTrans, 1, keys, blas32.Vector{N: len(h), Data: h, Inc: 1}, 0, blas32.Vector{N: len(w), Data: w, Inc: 1})
	mx := float32(math.Inf(-1))
	for _, x := range w {
		mx = max(mx, x)
	}
	var sum float64
	for i, x := range w {
		e := math.Exp(float64(x - mx))
		w[i] = float32(e)
		sum += e
	}
	inv := float32(1 / sum)
	for i := range w {
		w[i] *= inv
	}
	blas32.Gemv(blas.Trans, 1, keys, blas32.Vector{N: len(w), Data: w, Inc: 1}, 0, blas32.Vector{N: len(c), Data: c, Inc: 1})
}

// toMatrix views a blas32.General as a kernels.Matrix: the layouts are the
// same, so the types convert directly.
func toMatrix(g blas32.General) kernels.Matrix { return kernels.Matrix(g) }

func attnRamp(n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(i%17)/17 - 0.5
	}
	return s
}

// BenchmarkAttentionLuongDot is a Luong dot step at S=128, d=64: heed's
// attention.Memory under each ISA beside the gonum step.
func BenchmarkAttentionLuongDot(b *testing.B) {
	const S, d = 128, 64
	g := blas32.General{Rows: S, Cols: d, Stride: d, Data: attnRamp(S * d)}
	w, c, h := make([]float32, S), make([]float32, d), attnRamp(d)
	name := fmt.Sprintf("S=%d,d=%d", S, d)
	b.Run(name+"/gonum", func(b *testing.B) {
		for b.Loop() {
			gonumStep(w, c, g, h)
		}
	})
	m := selfMemory(toMatrix(g))
	prev := kernels.Active()
	defer kernels.Use(prev)
	for _, isa := range kernels.Supported() {
		kernels.Use(isa)
		b.Run(name+"/heed-"+isa.String(), func(b *testing.B) {
			for b.Loop() {
				m.Attend(w, c, h)
			}
		})
	}
}

// TestGonumStepAgrees guards the baseline: the gonum step and heed's step give
// the same weights and context (to float32 rounding) on the benchmark's data.
func TestGonumStepAgrees(t *testing.T) {
	const S, d = 128, 64
	g := blas32.General{Rows: S, Cols: d, Stride: d, Data: attnRamp(S * d)}
	h := attnRamp(d)
	w1, c1 := make([]float32, S), make([]float32, d)
	w2, c2 := make([]float32, S), make([]float32, d)
	gonumStep(w1, c1, g, h)
	selfMemory(toMatrix(g)).Attend(w2, c2, h)
	for i := range w1 {
		if math.Abs(float64(w1[i]-w2[i])) > 1e-5*float64(w1[i])+1e-7 {
			t.Fatalf("weights[%d]: gonum %v, heed %v", i, w1[i], w2[i])
		}
	}
	for j := range c1 {
		if math.Abs(float64(c1[j]-c2[j])) > 1e-5 {
			t.Fatalf("context[%d]: gonum %v, heed %v", j, c1[j], c2[j])
		}
	}
}

// selfMemory is a Luong dot Memory over m, its keys also its values.
func selfMemory(m kernels.Matrix) *attention.Memory {
	return attention.NewMemory(attention.Dot(), m, m)
}
