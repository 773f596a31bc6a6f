package kernels

// Softmax sets dst[i] = e^(x[i]−m) / Σⱼ e^(x[j]−m), m = max x: the numerically
// stable softmax. dst may be x (in place); it panics if len(dst) != len(x) or
// if dst otherwise overlaps x.
//
// Each output p[i] is within (|x[i]−m| + n + 4)·u relative of the exact value
// (u = 2⁻²⁴, n = len(x)), and the outputs sum to 1 within (n+2)·u; an output
// whose exact value is below 2⁻¹²⁶ (subnormal) is within 2⁻¹²⁶ absolute, as
// the exponential underflows to 0 there. Special values, the same bits on
// every ISA: a NaN input makes every output NaN (the default quiet NaN); a row
// that is all −Inf (fully masked) gives all zeros; when some inputs are +Inf
// they share the weight 1 equally and the rest get 0; −Inf entries of a row
// with a finite maximum get 0.
func Softmax(dst, x []float32) {
	softmax(dst, x)
}

// checkSoftmaxArgs panics unless Softmax's arguments are valid (called first by
// the dispatch of softmax).
func checkSoftmaxArgs(dst, x []float32) {
	if len(dst) != len(x) {
		panic(softmaxLen{len(dst), len(x)})
	}
	checkAlias("Softmax", dst, "x", x)
}

// Results of the assembly softmax kernels, which handle only rows whose
// maximum is finite and leave the rest to softmaxFinish.
const (
	softmaxDone    = 0 // dst holds the softmax
	softmaxSpecial = 1 // max x is ±Inf or NaN: nothing was written
	softmaxNaN     = 2 // x holds a NaN: dst (possibly x itself) holds garbage
)
