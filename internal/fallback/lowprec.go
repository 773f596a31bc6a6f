package fallback

import "math"

// Reduced-precision storage: bfloat16 and IEEE binary16 as their 16-bit
// encodings, and 8-bit blocks. Package kernels documents the formats; these
// are the reference conversions and decode products, written with integer
// operations so that every ISA's results can be compared bit for bit.

// Q8BlockLen is the number of values in a Q8Block.
const Q8BlockLen = 32

// Q8Block is 32 values stored as Scale·Q[i]; package kernels defines the same
// layout.
type Q8Block struct {
	Scale float32
	Q     [Q8BlockLen]int8
}

// BF16FromFloat32 returns x rounded to bfloat16, to nearest even; a NaN gives
// a quiet NaN with x's sign and the top six bits of its payload.
func BF16FromFloat32(x float32) uint16 {
	b := math.Float32bits(x)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// Float32FromBF16 returns the float32 with the value of h (exact).
func Float32FromBF16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// F16FromFloat32 returns x rounded to binary16, to nearest even: magnitudes
// from 65520 up give ±Inf, below 2⁻¹⁴ a subnormal (or ±0), and a NaN a quiet
// NaN with x's sign and the top nine bits of its payload.
func F16FromFloat32(x float32) uint16 {
	b := math.Float32bits(x)
	sign := uint16(b>>16) & 0x8000
	a := b & 0x7fffffff
	switch {
	case a > 0x7f800000: // NaN
		return sign | 0x7e00 | uint16(a>>13)&0x1ff
	case a >= 0x47800000: // ≥ 2¹⁶, ±Inf
		return sign | 0x7c00
	case a >= 0x38800000: // ≥ 2⁻¹⁴: normal unless rounding carries into Inf
		r := a - 0x38000000 // exponent rebiased from 127 to 15
		r += 0xfff + (r>>13)&1
		return sign | uint16(r>>13)
	case a > 0x33000000: // (2⁻²⁵, 2⁻¹⁴): a subnormal in units of 2⁻²⁴
		e := a >> 23
		m := a&0x7fffff | 0x800000
		s := 126 - e // 14..24
		q := m >> s
		rem, half := m&(1<<s-1), uint32(1)<<(s-1)
		if rem > half || rem == half && q&1 == 1 {
			q++
		}
		return sign | uint16(q)
	default: // ≤ 2⁻²⁵ rounds to ±0
		return sign
	}
}

// Float32FromF16 returns the float32 with the value of h (exact); a NaN gives
// a quiet NaN with h's sign and payload.
func Float32FromF16(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	e, m := uint32(h>>10)&0x1f, uint32(h&0x3ff)
	switch e {
	case 0x1f:
		if m != 0 {
			return math.Float32frombits(sign | 0x7fc00000 | m<<13)
		}
		return math.Float32frombits(sign | 0x7f800000)
	case 0:
		v := float32(m) * 0x1p-24
		return math.Float32frombits(sign | math.Float32bits(v))
	}
	return math.Float32frombits(sign | (e+112)<<23 | m<<13)
}

// BF16s sets dst[i] to src[i] rounded to bfloat16; len(dst) ≥ len(src).
func BF16s(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = BF16FromFloat32(v)
	}
}

// FromBF16s sets dst[i] to the value of src[i]; len(dst) ≥ len(src).
func FromBF16s(dst []float32, src []uint16) {
	dst = dst[:len(src)]
	for i, h := range src {
		dst[i] = Float32FromBF16(h)
	}
}

// F16s sets dst[i] to src[i] rounded to binary16; len(dst) ≥ len(src).
func F16s(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = F16FromFloat32(v)
	}
}

// FromF16s sets dst[i] to the value of src[i]; len(dst) ≥ len(src).
func FromF16s(dst []float32, src []uint16) {
	dst = dst[:len(src)]
	for i, h := range src {
		dst[i] = Float32FromF16(h)
	}
}

// QuantizeQ8 stores src in ⌈len(src)/32⌉ blocks of dst: for each block of up
// to 32 values, Scale is the smallest float32 ≥ max|x|/127 and Q[i] is
// x[i]/Scale rounded to nearest even (0 where Scale is 0, and past the end of
// src). A block holding NaN or ±Inf gets Scale NaN and Q all 0.
func QuantizeQ8(dst []Q8Block, src []float32) {
	nb := (len(src) + Q8BlockLen - 1) / Q8BlockLen
	dst = dst[:nb]
	for b := range dst {
		x := src[b*Q8BlockLen : min(len(src), (b+1)*Q8BlockLen)]
		dst[b] = quantizeBlock(x)
	}
}

func quantizeBlock(x []float32) Q8Block {
	var blk Q8Block
	m := float32(0)
	for _, v := range x {
		if v-v != 0 { // NaN or ±Inf
			blk.Scale = float32(math.NaN())
			return blk
		}
		m = max(m, float32(math.Abs(float64(v))))
	}
	if m == 0 {
		return blk
	}
	s64 := float64(m) / 127
	s := float32(s64)
	if float64(s) < s64 {
		s = math.Nextafter32(s, float32(math.Inf(1)))
	}
	blk.Scale = s
	for i, v := range x {
		// float64 division of two float32s is exact enough to round
		// correctly: a quotient is never within 2⁻⁵³ of a tie without being
		// one, and |q| ≤ 127 as s ≥ m/127.
		blk.Q[i] = int8(math.RoundToEven(float64(v) / float64(s)))
	}
	return blk
}

// DequantizeQ8 sets dst[i] to the value of element i of src, Scale·Q[i]
// rounded to float32; len(dst) ≤ 32·len(src).
func DequantizeQ8(dst []float32, src []Q8Block) {
	for i := range dst {
		blk := &src[i/Q8BlockLen]
		dst[i] = blk.Scale * float32(blk.Q[i%Q8BlockLen])
	}
}

// MatVecBF16 sets dst = A·x for the len(dst)×len(x) bfloat16 matrix A whose
// row r is a[r*stride:], accumulating in float32.
func MatVecBF16(dst []float32, a []uint16, stride int, x []float32) {
	for r := range dst {
		row := a[r*stride : r*stride+len(x)]
		var s0, s1 float32
		i := 0
		for ; i+2 <= len(x); i += 2 {
			s0 += Float32FromBF16(row[i]) * x[i]
			s1 += Float32FromBF16(row[i+1]) * x[i+1]
		}
		if i < len(x) {
			s0 += Float32FromBF16(row[i]) * x[i]
		}
		dst[r] = s0 + s1
	}
}

// MatVecF16 sets dst = A·x for the len(dst)×len(x) binary16 matrix A whose
// row r is a[r*stride:], accumulating in float32.
func MatVecF16(dst []float32, a []uint16, stride int, x []float32) {
	for r := range dst {
		row := a[r*stride : r*stride+len(x)]
		var s0, s1 float32
		i := 0
		for ; i+2 <= len(x); i += 2 {
			s0 += Float32FromF16(row[i]) * x[i]
			s1 += Float32FromF16(row[i+1]) * x[i+1]
		}
		if i < len(x) {
			s0 += Float32FromF16(row[i]) * x[i]
		}
		dst[r] = s0 + s1
	}
}

// MatVecQ8 sets dst = A·x for the len(dst)×len(x) matrix A of 8-bit blocks
// whose row r starts at block r*stride: for each row, Σ_b Scale_b·(Σ_i
// Q_b[i]·x[32b+i]) in float32.
func MatVecQ8(dst []float32, a []Q8Block, stride int, x []float32) {
	nb := (len(x) + Q8BlockLen - 1) / Q8BlockLen
	for r := range dst {
		row := a[r*stride : r*stride+nb]
		s := float32(0)
		for b := range row {
			xb := x[b*Q8BlockLen : min(len(x), (b+1)*Q8BlockLen)]
			p := float32(0)
			for i, v := range xb {
				p += float32(row[b].Q[i]) * v
			}
			s += row[b].Scale * p
		}
		dst[r] = s
	}
}

// MatTVecBF16 sets dst += Aᵀ·x for the len(x)×len(dst) bfloat16 matrix A whose
// row r is a[r*stride:].
func MatTVecBF16(dst []float32, a []uint16, stride int, x []float32) {
	for r, w := range x {
		row := a[r*stride : r*stride+len(dst)]
		for c, h := range row {
			dst[c] += w * Float32FromBF16(h)
		}
	}
}

// MatTVecF16 sets dst += Aᵀ·x for the len(x)×len(dst) binary16 matrix A whose
// row r is a[r*stride:].
func MatTVecF16(dst []float32, a []uint16, stride int, x []float32) {
	for r, w := range x {
		row := a[r*stride : r*stride+len(dst)]
		for c, h := range row {
			dst[c] += w * Float32FromF16(h)
		}
	}
}

// MatTVecQ8 sets dst += Aᵀ·x for the len(x)×len(dst) matrix A of 8-bit blocks
// whose row r starts at block r*stride: each row's weight x[r]·Scale_b is
// rounded once per block, then multiplies Q_b[i].
func MatTVecQ8(dst []float32, a []Q8Block, stride int, x []float32) {
	nb := (len(dst) + Q8BlockLen - 1) / Q8BlockLen
	for r, w := range x {
		row := a[r*stride : r*stride+nb]
		for b := range row {
			ws := w * row[b].Scale
			d := dst[b*Q8BlockLen : min(len(dst), (b+1)*Q8BlockLen)]
			for i := range d {
				d[i] += ws * float32(row[b].Q[i])
			}
		}
	}
}
