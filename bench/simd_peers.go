//go:build goexperiment.simd && amd64

package bench

// Peers that need GOEXPERIMENT=simd (make bench-simd): ajroetker/go-highway
// (its own runtime dispatch, AVX2 or AVX-512) and loops written with Go's
// simd/archsimd the way a user would write them (four accumulators; archsimd
// has no e^x or tanh, so it does the linear-algebra kernels only).

import (
	"simd/archsimd"

	"github.com/ajroetker/go-highway/hwy/contrib/activation"
	"github.com/ajroetker/go-highway/hwy/contrib/algo"
	"github.com/ajroetker/go-highway/hwy/contrib/matvec"
	"github.com/ajroetker/go-highway/hwy/contrib/nn"
	"github.com/ajroetker/go-highway/hwy/contrib/vec"
	"github.com/heedml/heed/kernels"
)

func init() {
	register(700, &Impl{
		Name: "highway",
		Note: map[Kernel]string{
			MatVec:      "matvec.MatVecFloat32 (vec.DotFloat32 per row for a strided matrix)",
			MatTVec:     "vec.MulConstAddToFloat32(dst, x[r], row r) per row",
			MatVecBatch: "matvec.MatVecFloat32 per vector (vec.DotFloat32 per row for a strided matrix)",
			Exp:         "algo.ExpTransformFloat32",
			Tanh:        "activation.TanhFloat32",
			Softmax:     "nn.SoftmaxFloat32",
			Additive:    "per row: vec.AddToFloat32(tmp, q, row), activation.TanhFloat32, vec.DotFloat32(tmp, v)",
		},
		// hwy/contrib/math documents "~4 ULP for most functions", but here
		// its e^x reaches 2.8e-5 relative error (near −40) and its tanh
		// 3.2e-4 (near 0), so those, not 4 ULP, bound its Exp, Tanh and
		// Softmax in TestPeersMatchHeed; the report says so.
		Tol:    map[Kernel]float64{Exp: 3e-5, Tanh: 4e-4, Softmax: 3e-5},
		Format: highwayFormats,
		Dot:    vec.DotFloat32,
		MatVec: func(dst []float32, a kernels.Matrix, x []float32) {
			if !dense(a) {
				for r := range dst {
					dst[r] = vec.DotFloat32(a.Row(r), x)
				}
				return
			}
			matvec.MatVecFloat32(contiguous(a), a.Rows, a.Cols, x, dst)
		},
		MatTVec: func(dst []float32, a kernels.Matrix, x []float32) {
			for r, w := range x {
				vec.MulConstAddToFloat32(dst, w, a.Row(r))
			}
		},
		MatVecBatch: func(dst, a, x kernels.Matrix) {
			for b := 0; b < x.Rows; b++ {
				if !dense(a) {
					for r, row := 0, dst.Row(b); r < a.Rows; r++ {
						row[r] = vec.DotFloat32(a.Row(r), x.Row(b))
					}
					continue
				}
				matvec.MatVecFloat32(contiguous(a), a.Rows, a.Cols, x.Row(b), dst.Row(b))
			}
		},
		Exp:     func(dst, x []float32) { algo.ExpTransformFloat32(x, dst) },
		Tanh:    func(dst, x []float32) { activation.TanhFloat32(x, dst) },
		Softmax: func(dst, x []float32) { nn.SoftmaxFloat32(x, dst) },
		Additive: func(dst []float32, k kernels.Matrix, q, v []float32) {
			tmp := scratch(&hwyTmp, len(q))
			for s := range dst {
				vec.AddToFloat32(tmp, q, k.Row(s))
				activation.TanhFloat32(tmp, tmp)
				dst[s] = vec.DotFloat32(tmp, v)
			}
		},
	})
	if archsimd.X86.AVX2() {
		register(710, archsimdImpl("archsimd/avx2", dotArchsimd8, axpyArchsimd8))
	}
	if archsimd.X86.AVX512() {
		register(711, archsimdImpl("archsimd/avx512", dotArchsimd16, axpyArchsimd16))
	}
}

var hwyTmp []float32

func archsimdImpl(name string, dot func(x, y []float32) float32, axpy func(a float32, x, y []float32)) *Impl {
	return &Impl{
		Name: name,
		Note: map[Kernel]string{
			MatVec: "its Dot per row", MatTVec: "its axpy per row", MatVecBatch: "its Dot per row per vector",
		},
		Dot: dot,
		MatVec: func(dst []float32, a kernels.Matrix, x []float32) {
			for r := range dst {
				dst[r] = dot(a.Row(r), x)
			}
		},
		MatTVec: func(dst []float32, a kernels.Matrix, x []float32) {
			for r, w := range x {
				axpy(w, a.Row(r), dst)
			}
		},
		MatVecBatch: func(dst, a, x kernels.Matrix) {
			for b := 0; b < x.Rows; b++ {
				xb, db := x.Row(b), dst.Row(b)
				for r := range db {
					db[r] = dot(a.Row(r), xb)
				}
			}
		},
	}
}

func dotArchsimd8(x, y []float32) float32 {
	y = y[:len(x)]
	var s0, s1, s2, s3 archsimd.Float32x8
	i := 0
	for ; i+32 <= len(x); i += 32 {
		s0 = archsimd.LoadFloat32x8Slice(x[i:]).MulAdd(archsimd.LoadFloat32x8Slice(y[i:]), s0)
		s1 = archsimd.LoadFloat32x8Slice(x[i+8:]).MulAdd(archsimd.LoadFloat32x8Slice(y[i+8:]), s1)
		s2 = archsimd.LoadFloat32x8Slice(x[i+16:]).MulAdd(archsimd.LoadFloat32x8Slice(y[i+16:]), s2)
		s3 = archsimd.LoadFloat32x8Slice(x[i+24:]).MulAdd(archsimd.LoadFloat32x8Slice(y[i+24:]), s3)
	}
	for ; i < len(x); i += 8 {
		s0 = archsimd.LoadFloat32x8SlicePart(x[i:]).MulAdd(archsimd.LoadFloat32x8SlicePart(y[i:]), s0)
	}
	var b [8]float32
	s0.Add(s1).Add(s2.Add(s3)).Store(&b)
	return ((b[0] + b[1]) + (b[2] + b[3])) + ((b[4] + b[5]) + (b[6] + b[7]))
}

func dotArchsimd16(x, y []float32) float32 {
	y = y[:len(x)]
	var s0, s1, s2, s3 archsimd.Float32x16
	i := 0
	for ; i+64 <= len(x); i += 64 {
		s0 = archsimd.LoadFloat32x16Slice(x[i:]).MulAdd(archsimd.LoadFloat32x16Slice(y[i:]), s0)
		s1 = archsimd.LoadFloat32x16Slice(x[i+16:]).MulAdd(archsimd.LoadFloat32x16Slice(y[i+16:]), s1)
		s2 = archsimd.LoadFloat32x16Slice(x[i+32:]).MulAdd(archsimd.LoadFloat32x16Slice(y[i+32:]), s2)
		s3 = archsimd.LoadFloat32x16Slice(x[i+48:]).MulAdd(archsimd.LoadFloat32x16Slice(y[i+48:]), s3)
	}
	for ; i < len(x); i += 16 {
		s0 = archsimd.LoadFloat32x16SlicePart(x[i:]).MulAdd(archsimd.LoadFloat32x16SlicePart(y[i:]), s0)
	}
	var b [16]float32
	s0.Add(s1).Add(s2.Add(s3)).Store(&b)
	var s float32
	for _, v := range b {
		s += v
	}
	return s
}

// axpyArchsimd8 sets y += a·x.
func axpyArchsimd8(a float32, x, y []float32) {
	y = y[:len(x)]
	va := archsimd.BroadcastFloat32x8(a)
	i := 0
	for ; i+8 <= len(x); i += 8 {
		archsimd.LoadFloat32x8Slice(x[i:]).MulAdd(va, archsimd.LoadFloat32x8Slice(y[i:])).StoreSlice(y[i:])
	}
	if i < len(x) {
		archsimd.LoadFloat32x8SlicePart(x[i:]).MulAdd(va, archsimd.LoadFloat32x8SlicePart(y[i:])).StoreSlicePart(y[i:])
	}
}

// axpyArchsimd16 sets y += a·x.
func axpyArchsimd16(a float32, x, y []float32) {
	y = y[:len(x)]
	va := archsimd.BroadcastFloat32x16(a)
	i := 0
	for ; i+16 <= len(x); i += 16 {
		archsimd.LoadFloat32x16Slice(x[i:]).MulAdd(va, archsimd.LoadFloat32x16Slice(y[i:])).StoreSlice(y[i:])
	}
	if i < len(x) {
		archsimd.LoadFloat32x16SlicePart(x[i:]).MulAdd(va, archsimd.LoadFloat32x16SlicePart(y[i:])).StoreSlicePart(y[i:])
	}
}
