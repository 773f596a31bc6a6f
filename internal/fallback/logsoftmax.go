package fallback

import "math"

// LogSoftmax sets dst[i] = (x[i] − m) − ln Σⱼ e^(x[j]−m) with m = max x;
// len(dst) ≥ len(x), and dst may be x. A NaN input makes every output the
// default quiet NaN; a row that is all −Inf gives all −Inf; when some inputs
// are +Inf, those share the probability 1 equally (each −ln k for k of them)
// and the rest get −Inf.
func LogSoftmax(dst, x []float32) {
	dst = dst[:len(x)]
	m := Max(x)
	switch {
	case m != m:
		FillNaN(dst)
		return
	case math.IsInf(float64(m), 0):
		var n float32
		for _, v := range x {
			if v == m {
				n++
			}
		}
		w := float32(math.Inf(-1))
		if m > 0 {
			w = -log32(n)
		}
		for i, v := range x {
			if v == m {
				dst[i] = w
			} else {
				dst[i] = float32(math.Inf(-1))
			}
		}
		return
	}
	var s float32
	for _, v := range x {
		s += exp32(v - m)
	}
	l := log32(s)
	for i, v := range x {
		dst[i] = (v - m) - l
	}
}
