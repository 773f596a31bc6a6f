package fallback

import "math"

// Softmax sets dst[i] = e^(x[i]−m) / Σⱼ e^(x[j]−m) with m = max x; len(dst) ≥
// len(x), and dst may be x. A NaN input makes every output the default quiet
// NaN; a row that is all −Inf gives all zeros; the +Inf entries of a row share
// 1 equally.
func Softmax(dst, x []float32) {
	dst = dst[:len(x)]
	m := Max(x)
	switch {
	case m != m:
		FillNaN(dst)
		return
	case math.IsInf(float64(m), 0):
		// All −Inf, or some +Inf: the limit puts equal mass on the entries equal to m.
		var n float32
		for _, v := range x {
			if v == m {
				n++
			}
		}
		w := float32(0)
		if m > 0 {
			w = 1 / n
		}
		for i, v := range x {
			if v == m {
				dst[i] = w
			} else {
				dst[i] = 0
			}
		}
		return
	}
	var sum float32
	for i, v := range x {
		e := exp32(v - m)
		dst[i] = e
		sum += e
	}
	Scale(1/sum, dst)
}

// nan is the default quiet NaN, the one every kernel's special-value path writes.
var nan = math.Float32frombits(0x7fc00000)

// FillNaN sets every element of dst to the default quiet NaN (0x7fc00000), the
// result of a softmax whose input holds a NaN.
func FillNaN(dst []float32) {
	for i := range dst {
		dst[i] = nan
	}
}
