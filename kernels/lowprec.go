package kernels

import (
	"unsafe"

	"github.com/heedml/heed/internal/fallback"
)

// Reduced-precision storage formats for keys and values. The query, the
// accumulation and the results stay float32; only the stored matrices are
// narrower, so that a decode step reads fewer bytes.
//
// Each format's bound on the storage rounding, per element x stored as x̂:
//
//	BF16    |x̂ − x| ≤ 2⁻⁸·|x|  (|x| ≥ 2⁻¹²⁶; below, |x̂ − x| ≤ 2⁻¹³⁴)
//	F16     |x̂ − x| ≤ 2⁻¹¹·|x| (2⁻¹⁴ ≤ |x| < 65520; below, |x̂ − x| ≤ 2⁻²⁵; from 65520 up x̂ = ±Inf)
//	Q8Block |x̂ − x| ≤ Scale/2  (absolute: half a quantisation step of x's block)
//
// A decode kernel on stored matrices computes in float32 on the stored values
// x̂, exactly as the float32 kernel would on the dequantised matrix, within the
// float32 kernel's bound (γₙ·Σ|x̂·y| for a dot product of n terms; Q8 has
// γₙ₊₂, for the block's scale). Against the float32 inputs that were stored,
// the error is that bound plus the storage term Σ|x̂ − x|·|y|.

// BF16 is a bfloat16 value: the upper 16 bits of a float32 (sign, 8-bit
// exponent, 7-bit fraction), little-endian in memory as a uint16.
type BF16 uint16

// F16 is an IEEE 754 binary16 value (sign, 5-bit exponent biased by 15, 10-bit
// fraction), little-endian in memory as a uint16.
type F16 uint16

// Q8BlockLen is the number of values in a Q8Block.
const Q8BlockLen = 32

// Q8Block holds 32 consecutive values of a row as Scale·Q[i]: symmetric 8-bit
// quantisation with one float32 scale per block. It is 36 bytes: Scale as a
// little-endian IEEE binary32 at bytes 0–3, then Q[0..31] as two's-complement
// int8 at bytes 4–35; no padding, 4-byte aligned.
//
// Storing the values x[0..n) (n ≤ 32, the rest of Q being 0): Scale is the
// smallest float32 ≥ max|x[i]|/127 (0 if all are 0), and Q[i] is x[i]/Scale
// rounded to nearest, ties to even, so |Q[i]| ≤ 127 and |Scale·Q[i] − x[i]| ≤
// Scale/2 exactly. A float32 scale (rather than binary16) covers every finite
// float32 block with no overflow or loss of the bound for tiny values; it
// costs 4 of the 36 bytes. A block holding NaN or ±Inf is stored with Scale =
// NaN and Q all 0: all its values read as NaN. −0 is stored as +0.
type Q8Block struct {
	Scale float32
	Q     [Q8BlockLen]int8
}

// fq8 views blocks as package fallback's type of the same layout.
func fq8(s []Q8Block) []fallback.Q8Block {
	return unsafe.Slice((*fallback.Q8Block)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// BF16FromFloat32 returns x rounded to bfloat16, to nearest even. Values
// beyond the largest bfloat16 round to ±Inf, float32 subnormals to bfloat16
// subnormals; a NaN gives a quiet NaN with x's sign and the top bits of its
// payload.
func BF16FromFloat32(x float32) BF16 { return BF16(fallback.BF16FromFloat32(x)) }

// Float32 returns the value of h, exactly.
func (h BF16) Float32() float32 { return fallback.Float32FromBF16(uint16(h)) }

// F16FromFloat32 returns x rounded to binary16, to nearest even: magnitudes of
// 65520 and more give ±Inf, those below 2⁻¹⁴ a subnormal or ±0; a NaN gives a
// quiet NaN with x's sign and the top nine bits of its payload.
func F16FromFloat32(x float32) F16 { return F16(fallback.F16FromFloat32(x)) }

// Float32 returns the value of h, exactly; a NaN gives a quiet NaN with h's
// sign and payload.
func (h F16) Float32() float32 { return fallback.Float32FromF16(uint16(h)) }

// ToBF16 sets dst[i] = BF16FromFloat32(src[i]) for every i. It panics unless
// len(dst) = len(src). dst and src must not overlap. No allocation.
func ToBF16(dst []BF16, src []float32) {
	if len(dst) != len(src) {
		panicf("ToBF16: len(dst)=%d != len(src)=%d", len(dst), len(src))
	}
	toBF16(u16s(dst), src)
}

// FromBF16 sets dst[i] to the value of src[i], exactly. It panics unless
// len(dst) = len(src). dst and src must not overlap. No allocation.
func FromBF16(dst []float32, src []BF16) {
	if len(dst) != len(src) {
		panicf("FromBF16: len(dst)=%d != len(src)=%d", len(dst), len(src))
	}
	fromBF16(dst, u16s(src))
}

// ToF16 sets dst[i] = F16FromFloat32(src[i]) for every i. It panics unless
// len(dst) = len(src). dst and src must not overlap. No allocation.
func ToF16(dst []F16, src []float32) {
	if len(dst) != len(src) {
		panicf("ToF16: len(dst)=%d != len(src)=%d", len(dst), len(src))
	}
	toF16(u16s(dst), src)
}

// FromF16 sets dst[i] to the value of src[i], exactly (NaNs quiet, as
// F16.Float32). It panics unless len(dst) = len(src). dst and src must not
// overlap. No allocation.
func FromF16(dst []float32, src []F16) {
	if len(dst) != len(src) {
		panicf("FromF16: len(dst)=%d != len(src)=%d", len(dst), len(src))
	}
	fromF16(dst, u16s(src))
}

// Q8Blocks returns the number of blocks that hold n values, ⌈n/32⌉.
func Q8Blocks(n int) int { return (n + Q8BlockLen - 1) / Q8BlockLen }

// ToQ8 stores src in dst, 32 values per block as Q8Block defines, the last
// block padded with zeros. It panics unless len(dst) = Q8Blocks(len(src)).
// No allocation.
func ToQ8(dst []Q8Block, src []float32) {
	if len(dst) != Q8Blocks(len(src)) {
		panicf("ToQ8: len(dst)=%d blocks but len(src)=%d needs %d", len(dst), len(src), Q8Blocks(len(src)))
	}
	toQ8Blocks(dst, src)
}

// FromQ8 sets dst[i] to Scale·Q[i mod 32] of block i/32 of src, rounded to
// float32 (the product may need 31 bits: one rounding, relative 2⁻²⁴). It
// panics unless Q8Blocks(len(dst)) = len(src). No allocation.
func FromQ8(dst []float32, src []Q8Block) {
	if Q8Blocks(len(dst)) != len(src) {
		panicf("FromQ8: len(dst)=%d needs %d blocks but len(src)=%d", len(dst), Q8Blocks(len(dst)), len(src))
	}
	fromQ8(dst, src)
}

// u16s views a slice of a 16-bit type as []uint16.
func u16s[T BF16 | F16](s []T) []uint16 {
	return unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}
