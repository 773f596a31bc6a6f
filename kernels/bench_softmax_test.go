package kernels

import (
	"fmt"
	"math"
	"testing"
)

// softmaxGo is the stable softmax a Go user would write with math.Exp.
func softmaxGo(dst, x []float32) {
	m := x[0]
	for _, v := range x {
		if v > m {
			m = v
		}
	}
	var s float32
	for i, v := range x {
		e := float32(math.Exp(float64(v - m)))
		dst[i] = e
		s += e
	}
	inv := 1 / s
	for i := range dst {
		dst[i] *= inv
	}
}

// additiveGo is the additive score a Go user would write with math.Tanh.
func additiveGo(dst []float32, k Matrix, q, v []float32) {
	for s := range dst {
		row := k.Row(s)
		var acc float32
		for i, qi := range q {
			acc += v[i] * float32(math.Tanh(float64(qi+row[i])))
		}
		dst[s] = acc
	}
}

func BenchmarkSoftmax(b *testing.B) {
	for _, n := range vecSizes {
		x, dst := ramp(n), make([]float32, n)
		for i := range x {
			x[i] *= 8 // scores spread over [−4, 4]
		}
		b.Run(fmt.Sprint("n=", n), func(b *testing.B) {
			b.Run("goloop", func(b *testing.B) {
				b.SetBytes(int64(8 * n))
				for b.Loop() {
					softmaxGo(dst, x)
				}
			})
			forEachISA(b, func(b *testing.B) {
				b.SetBytes(int64(8 * n))
				for b.Loop() {
					Softmax(dst, x)
				}
			})
		})
	}
}

func BenchmarkAdditiveScore(b *testing.B) {
	for _, shape := range [][2]int{{16, 64}, {16, 256}, {128, 64}, {128, 256}, {1024, 64}, {1024, 256}} {
		rows, d := shape[0], shape[1]
		k := Matrix{Rows: rows, Cols: d, Stride: d, Data: ramp(rows * d)}
		q, v, dst := ramp(d), ramp(d), make([]float32, rows)
		for i := range q {
			q[i] *= 4
		}
		b.Run(fmt.Sprintf("S=%d,d=%d", rows, d), func(b *testing.B) {
			b.Run("goloop", func(b *testing.B) {
				b.SetBytes(int64(4 * rows * d))
				for b.Loop() {
					additiveGo(dst, k, q, v)
				}
			})
			forEachISA(b, func(b *testing.B) {
				b.SetBytes(int64(4 * rows * d))
				for b.Loop() {
					AdditiveScore(dst, k, q, v)
				}
			})
		})
	}
}

// BenchmarkSoftmaxMatTVec is an attention step's softmax and context: the
// fused kernel against Softmax then MatTVec, side by side under each ISA.
func BenchmarkSoftmaxMatTVec(b *testing.B) {
	for _, sz := range [][2]int{{128, 64}, {512, 128}, {1024, 256}} {
		S, d := sz[0], sz[1]
		a := Matrix{Rows: S, Cols: d, Stride: d, Data: ramp(S * d)}
		scores, w, dst := ramp(S), make([]float32, S), make([]float32, d)
		for i := range scores {
			scores[i] *= 8
		}
		b.Run(fmt.Sprintf("S=%d,d=%d", S, d), func(b *testing.B) {
			forEachISA(b, func(b *testing.B) {
				b.Run("separate", func(b *testing.B) {
					for b.Loop() {
						copy(w, scores)
						Softmax(w, w)
						MatTVecAdd(dst, a, w)
					}
				})
				b.Run("fused", func(b *testing.B) {
					for b.Loop() {
						copy(w, scores)
						SoftmaxMatTVecAdd(dst, a, w)
					}
				})
			})
		})
	}
}
