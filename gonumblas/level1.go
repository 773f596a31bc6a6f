package gonumblas

import (
	"math"

	"github.com/heedml/heed/kernels"
)

// Sdot returns Σ x[i]·y[i] (blas.Float32Level1). Unit increments run heed's
// Dot; every other call is gonum's.
func (impl Implementation) Sdot(n int, x []float32, incX int, y []float32, incY int) float32 {
	if incX != 1 || incY != 1 || n < 1 || len(x) < n || len(y) < n {
		return impl.Implementation.Sdot(n, x, incX, y, incY)
	}
	return kernels.Dot(x[:n], y[:n])
}

// Saxpy sets y[i] += α·x[i] (blas.Float32Level1). Unit increments with α ≠ 0
// and x, y either disjoint or the same slice run heed's Axpy; every other call
// is gonum's.
func (impl Implementation) Saxpy(n int, alpha float32, x []float32, incX int, y []float32, incY int) {
	if incX != 1 || incY != 1 || n < 1 || len(x) < n || len(y) < n || alpha == 0 {
		impl.Implementation.Saxpy(n, alpha, x, incX, y, incY)
		return
	}
	xs, ys := x[:n], y[:n]
	if &xs[0] != &ys[0] && overlap(xs, ys) {
		impl.Implementation.Saxpy(n, alpha, x, incX, y, incY)
		return
	}
	kernels.Axpy(alpha, xs, ys)
}

// Sscal sets x[i] *= α (blas.Float32Level1), bit for bit as gonum does. A unit
// increment with α ≠ 0 runs heed's Scale; every other call is gonum's (α = 0
// stores zeros, NaN included).
func (impl Implementation) Sscal(n int, alpha float32, x []float32, incX int) {
	if incX != 1 || n < 1 || len(x) < n || alpha == 0 {
		impl.Implementation.Sscal(n, alpha, x, incX)
		return
	}
	kernels.Scale(x[:n], alpha, x[:n])
}

// nrm2Min is the least sum of squares Snrm2 takes from heed's Dot: above it, the
// squares that underflow change the sum by at most a relative n·2⁻⁹⁰.
const nrm2Min = 0x1p-60

// Snrm2 returns √(Σ x[i]²) (blas.Float32Level1). With a unit increment and
// n ≥ 2 it takes the sum of squares from heed's Dot when that sum is finite
// and ≥ 2⁻⁶⁰; otherwise (overflow, underflow, Inf or NaN elements) and for
// every other call it is gonum's scaled norm.
func (impl Implementation) Snrm2(n int, x []float32, incX int) float32 {
	if incX != 1 || n < 2 || len(x) < n {
		return impl.Implementation.Snrm2(n, x, incX)
	}
	x = x[:n]
	s := kernels.Dot(x, x)
	if !(s >= nrm2Min && s <= math.MaxFloat32) { // NaN fails both
		return impl.Implementation.Snrm2(n, x, incX)
	}
	return float32(math.Sqrt(float64(s)))
}

// Sasum returns Σ |x[i]| (blas.Float32Level1). A unit increment sums in eight
// interleaved partial sums (error ≤ γₙ·Σ|x[i]|); every other call is gonum's.
func (impl Implementation) Sasum(n int, x []float32, incX int) float32 {
	if incX != 1 || n < 1 || len(x) < n {
		return impl.Implementation.Sasum(n, x, incX)
	}
	return asum(x[:n])
}

func asum(x []float32) float32 {
	const mask = 0x7fffffff
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(x); i += 8 {
		v := x[i : i+8 : i+8]
		s0 += math.Float32frombits(math.Float32bits(v[0]) & mask)
		s1 += math.Float32frombits(math.Float32bits(v[1]) & mask)
		s2 += math.Float32frombits(math.Float32bits(v[2]) & mask)
		s3 += math.Float32frombits(math.Float32bits(v[3]) & mask)
		s4 += math.Float32frombits(math.Float32bits(v[4]) & mask)
		s5 += math.Float32frombits(math.Float32bits(v[5]) & mask)
		s6 += math.Float32frombits(math.Float32bits(v[6]) & mask)
		s7 += math.Float32frombits(math.Float32bits(v[7]) & mask)
	}
	for ; i < len(x); i++ {
		s0 += math.Float32frombits(math.Float32bits(x[i]) & mask)
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}
