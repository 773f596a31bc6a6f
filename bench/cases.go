package bench

import (
	"fmt"
	"math/rand/v2"

	"github.com/heedml/heed/kernels"
)

// Case is one kernel at one size: the inputs, and the work it must do.
type Case struct {
	Kernel Kernel
	N      int    // vector length, or the side of the square matrix
	Batch  int    // vectors per call (MatVecBatch)
	Label  string // "n=4096", "1024×1024", "8×(256×256)"
	Elems  int64  // elements produced or reduced (Gelem/s)
	Bytes  int64  // bytes each call moves (attention steps read the keys twice)
	// Footprint is the distinct data a call touches, which decides the cache
	// level whose bandwidth bounds it; 0 means Bytes.
	Footprint int64
	Flops     int64 // floating-point operations; for Exp/Tanh/Softmax/Additive one FMA slot (2) per element, see Ceilings
	in        *inputs
	attn      *attnInputs
}

type inputs struct {
	x, y, dst []float32
	a, xb, db kernels.Matrix // matrix, batch of vectors, batch of results
	q, v      []float32
}

// BatchSize is the number of query vectors in the MatVecBatch cases.
const BatchSize = 8

// NewCase returns kernel k at size n with deterministic random inputs in the
// ranges attention meets (scores within ±8, activations within ±2).
func NewCase(k Kernel, n int) *Case {
	r := rand.New(rand.NewPCG(uint64(k), uint64(n)))
	c := &Case{Kernel: k, N: n, in: &inputs{}}
	if isStep(k) {
		newAttnCase(c, r)
		return c
	}
	in := c.in
	nn := int64(n)
	switch k {
	case Dot:
		in.x, in.y = uniform(r, n, 1), uniform(r, n, 1)
		c.Label, c.Elems, c.Bytes, c.Flops = fmt.Sprint("n=", n), nn, 8*nn, 2*nn
	case MatVec, MatTVec:
		in.a = matrix(r, n, n, 1)
		in.x, in.dst = uniform(r, n, 1), make([]float32, n)
		c.Label, c.Elems, c.Bytes, c.Flops = fmt.Sprintf("%d×%d", n, n), nn*nn, 4*(nn*nn+2*nn), 2*nn*nn
		if k == MatTVec {
			c.Bytes += 4 * nn // dst is read and written
		}
	case MatVecBatch:
		c.Batch = BatchSize
		b := int64(c.Batch)
		in.a, in.xb, in.db = matrix(r, n, n, 1), matrix(r, c.Batch, n, 1), matrix(r, c.Batch, n, 0)
		c.Label, c.Elems, c.Bytes, c.Flops = fmt.Sprintf("%d×(%d×%d)", c.Batch, n, n), b*nn*nn, 4*(nn*nn+2*b*nn), 2*b*nn*nn
	case Exp, Tanh, Softmax:
		scale := float32(8)
		if k == Tanh {
			scale = 4
		}
		in.x, in.dst = uniform(r, n, scale), make([]float32, n)
		c.Label, c.Elems, c.Bytes, c.Flops = fmt.Sprint("n=", n), nn, 8*nn, 2*nn
	case Additive:
		in.a = matrix(r, n, n, 2)
		in.q, in.v, in.dst = uniform(r, n, 2), uniform(r, n, 1), make([]float32, n)
		c.Label, c.Elems, c.Bytes, c.Flops = fmt.Sprintf("%d×%d", n, n), nn*nn, 4*(nn*nn+3*nn), 2*nn*nn
	default:
		panic("bench: unknown kernel")
	}
	return c
}

func uniform(r *rand.Rand, n int, scale float32) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = scale * (2*r.Float32() - 1)
	}
	return s
}

func matrix(r *rand.Rand, rows, cols int, scale float32) kernels.Matrix {
	return kernels.Matrix{Rows: rows, Cols: cols, Stride: cols, Data: uniform(r, rows*cols, scale)}
}

var sink float32

// release drops the case's inputs, keeping its description for the results.
func (c *Case) release() { c.in, c.attn = nil, nil }

// Bind returns a function that runs im's implementation of the case iters
// times, or nil if im cannot do the work. Results go to the case's dst (and
// reductions to a package sink), so nothing is optimised away.
func (c *Case) Bind(im *Impl) func(iters int) {
	if !im.Has(c.Kernel) {
		return nil
	}
	in := c.in
	var run func(iters int)
	switch c.Kernel {
	case StepDot, StepScaled, StepGeneral, StepAdditive, StepBatch, MultiHead, StepMemory, DecodeF32, DecodeBF16, DecodeF16, DecodeQ8, DecodeQ8Q8:
		f := c.bindStep(im)
		run = func(iters int) {
			for range iters {
				f()
			}
		}
	case Dot:
		f, x, y := im.Dot, in.x, in.y
		run = func(iters int) {
			var s float32
			for range iters {
				s += f(x, y)
			}
			sink = s
		}
	case MatVec:
		f, a, x, dst := im.MatVec, in.a, in.x, in.dst
		run = func(iters int) {
			for range iters {
				f(dst, a, x)
			}
		}
	case MatTVec:
		// dst accumulates from zero; it stays finite for any realistic
		// iteration count, and the work per call does not depend on it.
		f, a, x, dst := im.MatTVec, in.a, in.x, in.dst
		run = func(iters int) {
			clear(dst)
			for range iters {
				f(dst, a, x)
			}
		}
	case MatVecBatch:
		f, a, x, d := im.MatVecBatch, in.a, in.xb, in.db
		run = func(iters int) {
			for range iters {
				f(d, a, x)
			}
		}
	case Exp, Tanh, Softmax:
		f := map[Kernel]func(dst, x []float32){Exp: im.Exp, Tanh: im.Tanh, Softmax: im.Softmax}[c.Kernel]
		x, dst := in.x, in.dst
		run = func(iters int) {
			for range iters {
				f(dst, x)
			}
		}
	case Additive:
		f, k, q, v, dst := im.Additive, in.a, in.q, in.v, in.dst
		run = func(iters int) {
			for range iters {
				f(dst, k, q, v)
			}
		}
	}
	return func(iters int) {
		im.enter()
		run(iters)
	}
}

// Sizes lists the sizes of each kernel, from 16 to beyond the last-level
// cache (vectors to 16M elements, square matrices to 4096, 64 MiB); the
// report's subset stops Exp, Tanh and AdditiveScore, which are bounded by
// instruction throughput, at 4 MiB.
func Sizes(k Kernel, full bool) []int {
	switch k {
	case Dot:
		if full {
			return []int{16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1 << 20, 4 << 20, 16 << 20}
		}
		return []int{16, 64, 256, 4096, 65536, 1 << 20, 16 << 20}
	case MatVec, MatTVec:
		if full {
			return []int{16, 32, 64, 128, 256, 512, 1024, 2048, 4096}
		}
		return []int{16, 64, 256, 1024, 4096}
	case MatVecBatch:
		if full {
			return []int{16, 64, 128, 256, 512, 1024, 2048, 4096}
		}
		return []int{16, 64, 256, 1024, 4096}
	case Exp, Tanh, Softmax:
		if full {
			return []int{16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1 << 20, 16 << 20}
		}
		if k == Softmax { // bandwidth-bound beyond the caches
			return []int{16, 64, 256, 4096, 65536, 1 << 20, 16 << 20}
		}
		return []int{16, 64, 256, 4096, 65536, 1 << 20}
	case Additive:
		if full {
			return []int{16, 32, 64, 128, 256, 512, 1024, 4096}
		}
		return []int{16, 64, 256, 1024}
	case StepDot, StepScaled, StepGeneral, StepAdditive:
		if full {
			return []int{16, 64, 128, 512, 1024, 2048, 4096, 8192}
		}
		return []int{16, 128, 512, 2048, 8192}
	case StepBatch:
		if full {
			return []int{16, 128, 512, 1024, 2048}
		}
		return []int{16, 128, 512, 2048}
	case MultiHead:
		if full {
			return []int{16, 64, 128, 256, 512}
		}
		return []int{16, 128, 512}
	case StepMemory:
		return []int{32768}
	case DecodeF32, DecodeBF16, DecodeF16, DecodeQ8, DecodeQ8Q8:
		return formatSizes
	}
	return nil
}
