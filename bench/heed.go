package bench

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/heedml/heed/kernels"
)

// heed under every ISA this CPU and build support (generic is package
// fallback/ reached through kernels' validation), under AVX512 also at the
// vector width the package did not choose for this CPU (named
// heed/avx512-256 or heed/avx512-512; heed/avx512 is the chosen one), and
// goroutine-parallel variants that split the rows of one call over P
// goroutines.
func init() {
	for i, isa := range kernels.Supported() {
		register(i, heedImpl(isa, 0))
		for j, im := range decodeImpls(isa, 0) {
			register(50+10*j+i, im)
		}
		if isa == kernels.AVX512 && defaultWidth != 0 {
			alt := 768 - defaultWidth // the other of 256 and 512
			register(10, heedImpl(isa, alt))
			for j, im := range decodeImpls(isa, alt) {
				register(50+10*j+9, im)
			}
		}
	}
	procs := []int{1, runtime.NumCPU()}
	if procs[1] == 1 {
		procs = procs[:1]
	}
	for _, p := range procs {
		register(900+p, parallelHeed(p))
	}
}

// heedImpl returns heed's kernels under isa, at the AVX-512 width bits (0:
// the package's choice).
func heedImpl(isa kernels.ISA, bits int) *Impl {
	im := &Impl{
		Name: heedName(isa, bits), Heed: true, ISA: isa, Width: bits,
		Dot: kernels.Dot, MatVec: kernels.MatVec, MatTVec: kernels.MatTVecAdd,
		MatVecBatch: kernels.MatVecBatch, Exp: kernels.Exp, Tanh: kernels.Tanh,
		Softmax: kernels.Softmax, Additive: kernels.AdditiveScore,
	}
	if bits != 0 {
		note := fmt.Sprintf("AVX-512 kernels that come in two widths computing in %d-bit vectors (HEED_AVX512_WIDTH=%d); this CPU's default is %d", bits, bits, defaultWidth)
		im.Note = map[Kernel]string{Dot: note, MatTVec: note, MatVecBatch: note, StepMemory: note}
	}
	return im
}

// heedName is "heed/" and the ISA, with the AVX-512 width when it is not
// the package's choice.
func heedName(isa kernels.ISA, bits int) string {
	if bits != 0 {
		return fmt.Sprintf("heed/%s-%d", isa, bits)
	}
	return "heed/" + isa.String()
}

// parallelHeed splits MatVec, MatTVec, MatVecBatch and AdditiveScore into p
// row (MatTVec: column) blocks, one goroutine each, under heed's default ISA.
func parallelHeed(p int) *Impl {
	note := fmt.Sprintf("%d goroutine(s), each calling heed on a block of rows (MatTVec: columns)", p)
	return &Impl{
		Name: fmt.Sprintf("heed×%d", p), Heed: true, ISA: defaultISA, Parallel: true, Threads: p,
		Note: map[Kernel]string{MatVec: note, MatTVec: note, MatVecBatch: note, Additive: note},
		MatVec: func(dst []float32, a kernels.Matrix, x []float32) {
			split(p, a.Rows, func(lo, hi int) {
				kernels.MatVec(dst[lo:hi], rowBlock(a, lo, hi), x)
			})
		},
		MatTVec: func(dst []float32, a kernels.Matrix, x []float32) {
			split(p, a.Cols, func(lo, hi int) {
				kernels.MatTVecAdd(dst[lo:hi], colBlock(a, lo, hi), x)
			})
		},
		MatVecBatch: func(dst, a, x kernels.Matrix) {
			split(p, a.Rows, func(lo, hi int) {
				kernels.MatVecBatch(colBlock(dst, lo, hi), rowBlock(a, lo, hi), x)
			})
		},
		Additive: func(dst []float32, k kernels.Matrix, q, v []float32) {
			split(p, k.Rows, func(lo, hi int) {
				kernels.AdditiveScore(dst[lo:hi], rowBlock(k, lo, hi), q, v)
			})
		},
	}
}

// split runs f on p nearly equal blocks of [0, n), on p goroutines (the
// caller's goroutine takes the last block).
func split(p, n int, f func(lo, hi int)) {
	if p <= 1 || n < 2*p {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	lo := 0
	for i := 0; i < p; i++ {
		hi := lo + (n-lo)/(p-i)
		if i == p-1 {
			f(lo, hi)
			break
		}
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			f(lo, hi)
		}(lo, hi)
		lo = hi
	}
	wg.Wait()
}

func rowBlock(a kernels.Matrix, lo, hi int) kernels.Matrix {
	if hi == lo {
		return kernels.Matrix{Cols: a.Cols, Stride: a.Stride}
	}
	return kernels.Matrix{Rows: hi - lo, Cols: a.Cols, Stride: a.Stride, Data: a.Data[lo*a.Stride:]}
}

func colBlock(a kernels.Matrix, lo, hi int) kernels.Matrix {
	return kernels.Matrix{Rows: a.Rows, Cols: hi - lo, Stride: a.Stride, Data: a.Data[lo:]}
}
