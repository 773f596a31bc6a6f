package kernels

// The element-wise kernels write dst from x (and y) element by element. Each
// panics, naming itself and the lengths, unless all its slices have the same
// length. dst may be x or y (the same slice: same first element and length),
// for an in-place update; it panics, naming the slices, if it otherwise
// overlaps them. x and y may overlap each other in any way. Each result is
// the IEEE float32 operation correctly rounded (AddScaled: one rounding of
// the exact alpha·x + y, a fused multiply-add), so results are the same on
// every ISA, special values included, except that a NaN result's payload is
// unspecified (it is a quiet NaN). None allocates; all are safe for
// concurrent use on disjoint dst.

// Scale sets dst[i] = alpha·x[i]; Scale(x, alpha, x) scales x in place. dst
// may be x; it panics if the lengths differ or dst otherwise overlaps x. Each
// product is rounded once, the same on every ISA.
func Scale(dst []float32, alpha float32, x []float32) { scaleTo(dst, alpha, x) }

// checkScaleArgs panics unless Scale's arguments are valid (called first by the
// dispatch of scaleTo).
func checkScaleArgs(dst, x []float32) {
	if len(dst) != len(x) {
		panic(scaleLen{len(dst), len(x)})
	}
	checkAlias("Scale", dst, "x", x)
}

// AddScaled sets dst[i] = alpha·x[i] + y[i], rounded once (a fused
// multiply-add): BLAS's axpy out of place. dst may be x or y; it panics if the
// lengths differ or dst otherwise overlaps them. The same bits on every ISA.
func AddScaled(dst []float32, alpha float32, x, y []float32) {
	check3("AddScaled", len(dst), len(x), len(y))
	checkAlias("AddScaled", dst, "x", x)
	checkAlias("AddScaled", dst, "y", y)
	axpyTo(dst, alpha, x, y)
}

// AddConst sets dst[i] = x[i] + c, rounded once. dst may be x; it panics if
// the lengths differ or dst otherwise overlaps x.
func AddConst(dst []float32, c float32, x []float32) {
	checkSameLen("AddConst", "dst", "x", len(dst), len(x))
	checkAlias("AddConst", dst, "x", x)
	addConstTo(dst, c, x)
}

// Add sets dst[i] = x[i] + y[i], rounded once. dst may be x or y; it panics if
// the lengths differ or dst otherwise overlaps them.
func Add(dst, x, y []float32) {
	check3("Add", len(dst), len(x), len(y))
	checkAlias("Add", dst, "x", x)
	checkAlias("Add", dst, "y", y)
	add(dst, x, y)
}

// Sub sets dst[i] = x[i] − y[i], rounded once. dst may be x or y; it panics if
// the lengths differ or dst otherwise overlaps them.
func Sub(dst, x, y []float32) {
	check3("Sub", len(dst), len(x), len(y))
	checkAlias("Sub", dst, "x", x)
	checkAlias("Sub", dst, "y", y)
	sub(dst, x, y)
}

// Mul sets dst[i] = x[i]·y[i], the element-wise (Hadamard) product, rounded
// once. dst may be x or y; it panics if the lengths differ or dst otherwise
// overlaps them.
func Mul(dst, x, y []float32) {
	check3("Mul", len(dst), len(x), len(y))
	checkAlias("Mul", dst, "x", x)
	checkAlias("Mul", dst, "y", y)
	mul(dst, x, y)
}

// Div sets dst[i] = x[i]/y[i], correctly rounded (IEEE division: x/±0 is ±Inf
// or NaN). dst may be x or y; it panics if the lengths differ or dst otherwise
// overlaps them.
func Div(dst, x, y []float32) {
	check3("Div", len(dst), len(x), len(y))
	checkAlias("Div", dst, "x", x)
	checkAlias("Div", dst, "y", y)
	div(dst, x, y)
}

func check3(kernel string, dst, x, y int) {
	if dst != x || x != y {
		panicf("%s: len(dst)=%d, len(x)=%d, len(y)=%d; want equal lengths", kernel, dst, x, y)
	}
}

// checkSameLen panics unless x = y, naming kernel and the two slices.
func checkSameLen(kernel, xn, yn string, x, y int) {
	if x != y {
		panicf("%s: len(%s)=%d != len(%s)=%d", kernel, xn, x, yn, y)
	}
}
