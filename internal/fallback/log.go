package fallback

import (
	"math"

	"github.com/heedml/heed/internal/coef"
)

// Log sets dst[i] = ln x[i]; len(dst) ≥ len(x), and dst may be x.
//
// It is the algorithm of the assembly kernels in float32, operation for
// operation (see kernels.Log), each FMA emulated exactly (fma32). A subnormal
// x is first scaled by 2²³. Then x = 2ᵉ·m with m ∈ [√½, √2) from the bits
// (subtract those of √½, the exponent field is e, the rest plus √½'s bits is
// m), f = m − 1 (exact), and
//
//	ln x = e·ln2 + f + (f²·(−½ + f·P(f)) + e·Ln2Lo32),
//
// P the degree-7 polynomial of asmgen/fit (Log0..Log7), the last addition an
// FMA with e·Ln2. Special values: Log(±0) = −Inf, Log(x < 0) = NaN,
// Log(+Inf) = +Inf, Log(NaN) = NaN, Log(1) = +0.
func Log(dst, x []float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = log32(v)
	}
}

func log32(x float32) float32 {
	switch {
	case x != x:
		return x
	case x < 0:
		return nan
	case x == 0:
		return float32(math.Inf(-1))
	case math.IsInf(float64(x), 1):
		return x
	}
	var k float32
	if x < 0x1p-126 {
		x *= 0x1p23
		k = -23
	}
	ix := math.Float32bits(x) - coef.LogSqrtHalf
	e := float32(int32(ix)>>23) + k
	f := math.Float32frombits(ix&(1<<23-1)+coef.LogSqrtHalf) - 1
	p := fma32(fma32(fma32(fma32(fma32(fma32(fma32(coef.Log7, f, coef.Log6), f, coef.Log5), f, coef.Log4), f, coef.Log3), f, coef.Log2), f, coef.Log1), f, coef.Log0)
	t := fma32(f, p, -0.5)
	s := fma32(e, coef.Ln2Lo32, f*f*t)
	return fma32(e, coef.Ln2, f+s)
}

// Ln returns ln x for one float32, with Log's algorithm and bits.
func Ln(x float32) float32 { return log32(x) }
