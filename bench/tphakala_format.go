package bench

import (
	"math"

	"github.com/heedml/heed/kernels"
	"github.com/tphakala/simd/f16"
	"github.com/tphakala/simd/f32"
	"github.com/tphakala/simd/i8"
)

// tphakala/simd's decode steps on stored caches: its f16 package for float16
// keys and values, its i8 package for 8-bit blocks of 32 with one scale
// (symmetric, as heed's Q8 format; the query is quantised the same way each
// step, since i8's dot products take two int8 operands). Its f32 softmax
// composition (tphSoftmax) turns the scores into weights.

// u11 and u24 are the unit roundoffs of binary16 and float32.
const u11, u24 = 0x1p-11, 0x1p-24

var tphakalaF16 = &FormatStep{
	Note: "keys and values as f16.Float16 rows; per step f16.FromFloat32Slice(query), f16.DotProductBatch (scores), " +
		"the f32 softmax, per row f16.ToFloat32Slice then f32.AddScaled (context)",
	Bind: func(keys []kernels.Matrix) func(i int, h, weights, ctx []float32) {
		type cache struct{ k, v [][]f16.Float16 }
		cs := make([]cache, len(keys))
		for m, km := range keys {
			cs[m] = cache{k: f16Rows(km), v: f16Rows(km)}
		}
		d := keys[0].Cols
		hq, tmp := make([]f16.Float16, d), make([]float32, d)
		return func(i int, h, weights, ctx []float32) {
			c := cs[i]
			f16.FromFloat32Slice(hq, h)
			f16.DotProductBatch(weights, c.k, hq)
			tphSoftmax(weights, weights)
			clear(ctx)
			for r, w := range weights {
				f16.ToFloat32Slice(tmp, c.v[r])
				f32.AddScaled(ctx, w, tmp)
			}
		}
	},
	Widen: widenF16,
	// Exact products of binary16 values summed in float32; f32's e^x to
	// 7.3e-6 relative.
	ScoreRel: 130 * u24, WeightAbs: 1e-5,
}

// widenF16 returns a rounded to binary16 by f16 and widened back.
func widenF16(a kernels.Matrix) kernels.Matrix {
	out := kernels.Matrix{Rows: a.Rows, Cols: a.Cols, Stride: a.Cols, Data: make([]float32, a.Rows*a.Cols)}
	for r, row := range f16Rows(a) {
		f16.ToFloat32Slice(out.Row(r), row)
	}
	return out
}

// f16Rows returns a's rows converted to binary16, in one allocation.
func f16Rows(a kernels.Matrix) [][]f16.Float16 {
	buf := make([]f16.Float16, a.Rows*a.Cols)
	rows := make([][]f16.Float16, a.Rows)
	for r := range rows {
		rows[r] = buf[r*a.Cols : (r+1)*a.Cols : (r+1)*a.Cols]
		f16.FromFloat32Slice(rows[r], a.Row(r))
	}
	return rows
}

var tphakalaQ8 = &FormatStep{
	Note: "keys and values as int8 blocks of 32 with a float32 scale (max|x|/127, i8.Quantize); per step the query " +
		"quantised the same way, i8.DotProductBatch per block column (scores, times both scales), the f32 softmax, " +
		"per row i8.Dequantize per block then f32.AddScaled (context)",
	Bind: func(keys []kernels.Matrix) func(i int, h, weights, ctx []float32) {
		cs := make([]*q8Copy, len(keys))
		for m, km := range keys {
			cs[m] = newQ8Copy(km)
		}
		d := keys[0].Cols
		nb := (d + 31) / 32
		hq, hs := make([]int8, d), make([]float32, nb)
		dots, tmp := make([]int32, keys[0].Rows), make([]float32, d)
		return func(i int, h, weights, ctx []float32) {
			c := cs[i]
			quantizeBlocks(hq, hs, h)
			clear(weights)
			for b := range nb {
				i8.DotProductBatch(dots, c.kcols[b], hq[b*32:min(d, b*32+32)])
				for r, x := range dots {
					weights[r] += float32(x) * c.ks[r*nb+b] * hs[b]
				}
			}
			tphSoftmax(weights, weights)
			clear(ctx)
			for r, w := range weights {
				for b := range nb {
					lo, hi := b*32, min(d, b*32+32)
					i8.Dequantize(tmp[lo:hi], c.v[r*d+lo:r*d+hi], c.vs[r*nb+b], 0)
				}
				f32.AddScaled(ctx, w, tmp)
			}
		}
	},
	Widen: widenQ8,
	// Exact int32 dot products; each block's times the two scales and the
	// sum of the blocks in float32; f32's e^x to 7.3e-6 relative.
	ScoreRel: 8 * u24, WeightAbs: 1e-5,
}

// widenQ8 returns a quantised in blocks as tphakalaQ8 stores it, dequantised.
func widenQ8(a kernels.Matrix) kernels.Matrix {
	c, d := newQ8Copy(a), a.Cols
	nb := (d + 31) / 32
	out := kernels.Matrix{Rows: a.Rows, Cols: d, Stride: d, Data: make([]float32, a.Rows*d)}
	for r := range a.Rows {
		for b := range nb {
			lo, hi := b*32, min(d, b*32+32)
			i8.Dequantize(out.Data[r*d+lo:r*d+hi], c.k[r*d+lo:r*d+hi], c.ks[r*nb+b], 0)
		}
	}
	return out
}

// q8Copy is a matrix in int8 blocks of 32 (the last one shorter if the row
// is), each with its scale, stored twice (keys and values).
type q8Copy struct {
	k, v   []int8    // row-major, rows of d
	ks, vs []float32 // a scale per row and block
	kcols  [][][]int8
}

func newQ8Copy(a kernels.Matrix) *q8Copy {
	d := a.Cols
	nb := (d + 31) / 32
	c := &q8Copy{k: make([]int8, a.Rows*d), v: make([]int8, a.Rows*d),
		ks: make([]float32, a.Rows*nb), vs: make([]float32, a.Rows*nb)}
	for r := range a.Rows {
		quantizeBlocks(c.k[r*d:(r+1)*d], c.ks[r*nb:(r+1)*nb], a.Row(r))
		quantizeBlocks(c.v[r*d:(r+1)*d], c.vs[r*nb:(r+1)*nb], a.Row(r))
	}
	c.kcols = make([][][]int8, nb)
	for b := range nb {
		lo, hi := b*32, min(d, b*32+32)
		c.kcols[b] = make([][]int8, a.Rows)
		for r := range a.Rows {
			c.kcols[b][r] = c.k[r*d+lo : r*d+hi]
		}
	}
	return c
}

// quantizeBlocks quantises x in blocks of 32 with i8.Quantize, each block's
// scale max|x|/127 (1 for a zero block) stored in scales.
func quantizeBlocks(dst []int8, scales []float32, x []float32) {
	for b := range scales {
		lo, hi := b*32, min(len(x), b*32+32)
		var m float32
		for _, v := range x[lo:hi] {
			m = max(m, float32(math.Abs(float64(v))))
		}
		s := m / 127
		if s == 0 {
			s = 1
		}
		scales[b] = s
		i8.Quantize(dst[lo:hi], x[lo:hi], s, 0)
	}
}
