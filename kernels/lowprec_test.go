package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"unsafe"

	"github.com/heedml/heed/internal/fallback"
)

// The oracles here are written from the formats' definitions in float64,
// independently of the integer code in fallback.

// bf16Value returns the value of the bfloat16 h as a float64 (NaN for NaN).
func bf16Value(h uint16) float64 { return float64(math.Float32frombits(uint32(h) << 16)) }

// f16Value returns the value of the binary16 h as a float64.
func f16Value(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	e, m := int(h>>10&0x1f), float64(h&0x3ff)
	switch e {
	case 0x1f:
		if m != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	case 0:
		return sign * math.Ldexp(m, -24)
	}
	return sign * math.Ldexp(1+m/1024, e-15)
}

// f16Positive lists the value of every finite non-negative binary16, in
// increasing order (index = encoding).
var f16Positive = func() []float64 {
	v := make([]float64, 0x7c00)
	for h := range v {
		v[h] = f16Value(uint16(h))
	}
	return v
}()

// roundF16 returns the binary16 encoding of x rounded to nearest even, from
// the table of values (NaN handled by the caller).
func roundF16(x float32) uint16 {
	sign := uint16(0)
	if math.Signbit(float64(x)) {
		sign = 0x8000
	}
	a := math.Abs(float64(x))
	if a >= 65520 { // halfway between 65504 and 2¹⁶, which is even: Inf
		return sign | 0x7c00
	}
	i := sort.SearchFloat64s(f16Positive, a) // f16Positive[i] ≥ a
	if i == len(f16Positive) {               // (65504, 65520): nearer 65504
		return sign | 0x7bff
	}
	if f16Positive[i] == a || i == 0 {
		return sign | uint16(i)
	}
	lo, hi := f16Positive[i-1], f16Positive[i]
	switch {
	case a-lo < hi-a:
		i--
	case a-lo == hi-a && (i-1)%2 == 0:
		i--
	}
	return sign | uint16(i)
}

// roundBF16 returns the bfloat16 encoding of the non-NaN x rounded to nearest
// even, comparing distances to the two neighbours in float64.
func roundBF16(x float32) uint16 {
	b := math.Float32bits(x)
	lo := uint16(b >> 16) // truncation: toward zero
	if b&0xffff == 0 {
		return lo
	}
	hi := lo + 1 // away from zero (0x7f7f+1 is Inf)
	a := math.Abs(float64(x))
	dl, dh := a-math.Abs(bf16Value(lo)), math.Abs(bf16Value(hi))-a
	if lo&0x7fff == 0x7f7f { // beyond the largest: the next "value" is 2¹²⁸
		dh = math.Ldexp(1, 128) - a
	}
	if dl < dh || dl == dh && lo%2 == 0 {
		return lo
	}
	return hi
}

// conversionInputs returns edge cases and random bit patterns for the
// narrowing conversions.
func conversionInputs(rng *rand.Rand, n int) []float32 {
	var xs []float32
	for _, b := range []uint32{
		0, 0x80000000, 1, 0x80000001, 0x007fffff, 0x00800000, // float32 subnormals and the smallest normal
		0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7fa00000, 0x7fbfffff, 0x7fc00001, 0x7f802000,
		0x7f7fffff, 0xff7fffff, 0x7f7f8000, 0x7f7f7fff, 0x7f7f8001, // near the largest bfloat16
		0x3f808000, 0x3f818000, 0x3f808001, 0x3f807fff, // bfloat16 ties to even, down and up
		0x477fe000, 0x477fefff, 0x477ff000, 0x477ff001, 0x47800000, // around 65504, 65520
		0x33000000, 0x33000001, 0x33800000, 0x33c00000, 0x34000000, 0x32ffffff, // around 2⁻²⁵, 2⁻²⁴
		0x387fc000, 0x387fe000, 0x387ff000, 0x38800000, 0x38801000, // around the smallest normal binary16
		0x3f801000, 0x3f803000, 0x3f800fff, // binary16 ties
	} {
		xs = append(xs, math.Float32frombits(b))
	}
	// Every binary16 and bfloat16 value, and the midpoints between neighbours.
	for h := 0; h < 0x7c00; h++ {
		v := f16Positive[h]
		xs = append(xs, float32(v), -float32(v))
		if h+1 < 0x7c00 {
			xs = append(xs, float32((v+f16Positive[h+1])/2))
		}
	}
	for h := uint32(0); h < 0x7f80; h += 7 {
		xs = append(xs, math.Float32frombits(h<<16|0x8000), math.Float32frombits(h<<16|0x80008000))
	}
	for range n {
		xs = append(xs, math.Float32frombits(rng.Uint32()))
	}
	return xs
}

func TestFromBF16Exhaustive(t *testing.T) {
	src := make([]BF16, 1<<16)
	for i := range src {
		src[i] = BF16(i)
	}
	dst := make([]float32, len(src))
	forEachISA(t, func(t *testing.T) {
		FromBF16(dst, src)
		for i, v := range dst {
			if got, want := math.Float32bits(v), uint32(i)<<16; got != want {
				t.Fatalf("FromBF16(%#04x) = %#08x, want %#08x", i, got, want)
			}
			if got := BF16(i).Float32(); math.Float32bits(got) != uint32(i)<<16 {
				t.Fatalf("BF16(%#04x).Float32() = %#08x", i, math.Float32bits(got))
			}
		}
	})
}

func TestFromF16Exhaustive(t *testing.T) {
	src := make([]F16, 1<<16)
	for i := range src {
		src[i] = F16(i)
	}
	dst := make([]float32, len(src))
	forEachISA(t, func(t *testing.T) {
		FromF16(dst, src)
		for i, v := range dst {
			want := f16Value(uint16(i))
			if math.IsNaN(want) {
				// A quiet NaN with the sign and payload: quiet bit set.
				wb := uint32(i&0x8000)<<16 | 0x7fc00000 | uint32(i&0x3ff)<<13
				if math.Float32bits(v) != wb {
					t.Fatalf("FromF16(%#04x) = %#08x, want %#08x", i, math.Float32bits(v), wb)
				}
				continue
			}
			if float64(v) != want || math.Signbit(float64(v)) != math.Signbit(want) {
				t.Fatalf("FromF16(%#04x) = %v, want %v", i, v, want)
			}
			if got := F16(i).Float32(); math.Float32bits(got) != math.Float32bits(v) {
				t.Fatalf("F16(%#04x).Float32() = %#08x, FromF16 %#08x", i, math.Float32bits(got), math.Float32bits(v))
			}
		}
	})
}

// checkNarrow checks one narrowed value against the rounding oracle, the
// quiet-NaN rule and the storage bound.
func checkNarrow(t *testing.T, what string, x float32, got uint16, bf bool) {
	t.Helper()
	b := math.Float32bits(x)
	if x != x {
		var want uint16
		if bf {
			want = uint16(b>>16) | 0x40
		} else {
			want = uint16(b>>16)&0x8000 | 0x7e00 | uint16(b>>13)&0x1ff
		}
		if got != want {
			t.Fatalf("%s(%#08x) = %#04x, want the quiet NaN %#04x", what, b, got, want)
		}
		return
	}
	var want uint16
	var val, u, tiny float64
	if bf {
		want, val, u, tiny = roundBF16(x), bf16Value(got), 0x1p-8, 0x1p-134
	} else {
		want, val, u, tiny = roundF16(x), f16Value(got), 0x1p-11, 0x1p-25
	}
	if got != want {
		t.Fatalf("%s(%v = %#08x) = %#04x, want %#04x", what, x, b, got, want)
	}
	// The storage bound, the doc's statement (relative above the smallest
	// normal, absolute below, ±Inf beyond the range).
	a := math.Abs(float64(x))
	if math.IsInf(val, 0) {
		if !math.IsInf(float64(x), 0) && (bf && a <= math.MaxFloat32*(1-0x1p-9) || !bf && a < 65520) {
			t.Fatalf("%s(%v) = ±Inf", what, x)
		}
		return
	}
	if err := math.Abs(val - float64(x)); !(err <= u*a || err <= tiny) {
		t.Fatalf("%s(%v) = %v: error %.3g beyond the storage bound", what, x, val, err)
	}
}

func TestToBF16ToF16(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	xs := conversionInputs(rng, 1<<18)
	bfs, fs := make([]BF16, len(xs)), make([]F16, len(xs))
	forEachISA(t, func(t *testing.T) {
		ToBF16(bfs, xs)
		ToF16(fs, xs)
		for i, x := range xs {
			checkNarrow(t, "ToBF16", x, uint16(bfs[i]), true)
			checkNarrow(t, "ToF16", x, uint16(fs[i]), false)
			if s := BF16FromFloat32(x); s != bfs[i] {
				t.Fatalf("BF16FromFloat32(%#08x) = %#04x, ToBF16 %#04x", math.Float32bits(x), s, bfs[i])
			}
			if s := F16FromFloat32(x); s != fs[i] {
				t.Fatalf("F16FromFloat32(%#08x) = %#04x, ToF16 %#04x", math.Float32bits(x), s, fs[i])
			}
		}
	})
}

// TestConversionsSlab runs each conversion on every short length at several
// offsets into a larger slice with canaries around, against the fallback
// bit for bit.
func TestConversionsSlab(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const c16 = 0xdead
	forEachISA(t, func(t *testing.T) {
		for _, n := range smallLengths {
			for _, off := range []int{0, 1, 3, 8} {
				src, srcOK := slab(t, n, off)
				for i := range src {
					src[i] = math.Float32frombits(rng.Uint32())
					if i%5 == 0 {
						fill(rng, src[i:i+1])
					}
				}
				buf16 := make([]uint16, n+off+19)
				for i := range buf16 {
					buf16[i] = c16
				}
				d16 := buf16[off : off+n : off+n]
				check16 := func(what string) {
					for i, v := range buf16 {
						if (i < off || i >= off+n) && v != c16 {
							t.Fatalf("%s n=%d off=%d: element %d outside written", what, n, off, i)
						}
					}
				}
				ToBF16(bf16s(d16), src)
				check16("ToBF16")
				for i, x := range src {
					if want := fallback.BF16FromFloat32(x); d16[i] != want {
						t.Fatalf("ToBF16 n=%d off=%d [%d] = %#04x, want %#04x", n, off, i, d16[i], want)
					}
				}
				dst, dstOK := slab(t, n, off)
				FromBF16(dst, bf16s(d16))
				dstOK()
				for i, h := range d16 {
					if math.Float32bits(dst[i]) != uint32(h)<<16 {
						t.Fatalf("FromBF16 n=%d off=%d [%d]", n, off, i)
					}
				}
				ToF16(f16s(d16), src)
				check16("ToF16")
				for i, x := range src {
					if want := fallback.F16FromFloat32(x); d16[i] != want {
						t.Fatalf("ToF16 n=%d off=%d [%d] of %#08x = %#04x, want %#04x", n, off, i, math.Float32bits(x), d16[i], want)
					}
				}
				FromF16(dst, f16s(d16))
				dstOK()
				for i, h := range d16 {
					if math.Float32bits(dst[i]) != math.Float32bits(fallback.Float32FromF16(h)) {
						t.Fatalf("FromF16 n=%d off=%d [%d]", n, off, i)
					}
				}
				srcOK()
			}
		}
	})
}

func bf16s(s []uint16) []BF16 {
	return unsafe.Slice((*BF16)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}
func f16s(s []uint16) []F16 { return unsafe.Slice((*F16)(unsafe.Pointer(unsafe.SliceData(s))), len(s)) }

func TestQ8Quantize(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 4000; trial++ {
		n := 1 + rng.IntN(100)
		x := make([]float32, n)
		e := rng.IntN(288) - 160 // scales from subnormal to huge, all finite
		for i := range x {
			x[i] = float32(math.Ldexp(rng.Float64()*2-1, e))
			if rng.IntN(20) == 0 {
				x[i] = 0
			}
		}
		if trial%7 == 0 { // exact ties: (k+½)·s for the block's scale
			s := float32(math.Ldexp(1, rng.IntN(40)-20))
			x[0] = 127 * s
			for i := 1; i < min(n, 32); i++ {
				x[i] = (float32(rng.IntN(254)-127) + 0.5) * s
			}
		}
		blocks := make([]Q8Block, Q8Blocks(n))
		ToQ8(blocks, x)
		back := make([]float32, n)
		FromQ8(back, blocks)
		for b, blk := range blocks {
			xb := x[b*32 : min(n, b*32+32)]
			m := 0.0
			for _, v := range xb {
				m = max(m, math.Abs(float64(v)))
			}
			s := float64(blk.Scale)
			// The smallest float32 ≥ max/127.
			if s < m/127 || m > 0 && float64(math.Nextafter32(blk.Scale, 0)) >= m/127 || m == 0 && s != 0 {
				t.Fatalf("block %d: scale %v for max %v", b, s, m)
			}
			for i := range blk.Q {
				if i >= len(xb) {
					if blk.Q[i] != 0 {
						t.Fatalf("block %d: Q[%d] = %d past the values", b, i, blk.Q[i])
					}
					continue
				}
				q := float64(blk.Q[i])
				if err := math.Abs(s*q - float64(xb[i])); err > s/2 {
					t.Fatalf("block %d: %v stored as %v·%v: error %v > step/2", b, xb[i], s, q, err)
				} else if err == s/2 && int(q)%2 != 0 {
					t.Fatalf("block %d: tie %v stored as odd %v", b, xb[i], q)
				}
				if back[b*32+i] != blk.Scale*float32(blk.Q[i]) {
					t.Fatalf("FromQ8 [%d] = %v, want %v·%v", b*32+i, back[b*32+i], blk.Scale, blk.Q[i])
				}
			}
		}
	}
	// Special values: the block holding them reads as NaN; others unaffected.
	for _, sp := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		x := make([]float32, 40)
		for i := range x {
			x[i] = float32(i)
		}
		x[33] = sp
		blocks := make([]Q8Block, 2)
		ToQ8(blocks, x)
		if blocks[0].Scale != float32(31)/127 && float64(blocks[0].Scale) < 31.0/127 {
			t.Fatalf("block 0 scale %v", blocks[0].Scale)
		}
		if blocks[1].Scale == blocks[1].Scale || blocks[1].Q != [32]int8{} {
			t.Fatalf("a block with %v: %+v", sp, blocks[1])
		}
	}
}

func TestConversionPanics(t *testing.T) {
	mustPanic(t, "heed/kernels: ToBF16: len(dst)=1 != len(src)=2", func() { ToBF16(make([]BF16, 1), make([]float32, 2)) })
	mustPanic(t, "heed/kernels: FromF16: len(dst)=2 != len(src)=1", func() { FromF16(make([]float32, 2), make([]F16, 1)) })
	mustPanic(t, "heed/kernels: ToQ8: len(dst)=1 blocks but len(src)=33 needs 2", func() { ToQ8(make([]Q8Block, 1), make([]float32, 33)) })
	mustPanic(t, "heed/kernels: FromQ8: len(dst)=33 needs 2 blocks but len(src)=1", func() { FromQ8(make([]float32, 33), make([]Q8Block, 1)) })
}

func ExampleToBF16() {
	x := []float32{1, 1.00390625, 1.01171875, 3.14159265}
	h := make([]BF16, len(x))
	ToBF16(h, x)
	back := make([]float32, len(x))
	FromBF16(back, h)
	fmt.Println(back)
	// Output: [1 1 1.015625 3.140625]
}
