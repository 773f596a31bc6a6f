package kernels

// Softmax sets dst[i] = e^(x[i]−m) / Σⱼ e^(x[j]−m), m = max x: the numerically
// stable softmax. It panics if len(dst) != len(x); dst may be x (in place), but
// must not otherwise overlap it.
//
// Each output is within (|x[i]−m| + n + 4)·u relative of the exact value, and
// the outputs sum to 1 within (n+2)·u. Special values: a NaN input makes every
// output NaN; a row that is all −Inf (fully masked) gives all zeros; when some
// inputs are +Inf they share the weight 1 equally and the rest get 0.
func Softmax(dst, x []float32) {
	checkSameLen("Softmax", "dst", "x", len(dst), len(x))
	softmax(dst, x)
}
