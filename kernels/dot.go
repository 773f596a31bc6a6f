package kernels

// Dot returns Σ x[i]·y[i]. It panics if len(x) != len(y).
//
// Accuracy: when every input is finite, the result is within
// γₙ·Σ|x[i]·y[i]| + n·2⁻¹⁴⁹ of the exact sum (n = len(x), γₙ = n·u/(1−n·u),
// u = 2⁻²⁴; the last term covers products that underflow), unless the finite
// products overflow (below). The summation order, and whether each product is
// rounded before it is added (fused multiply-add), depend on the ISA, so
// results may differ in the last bits between ISAs.
//
// Special values. Say the finite products overflow when some x[i]·y[i] of
// finite factors exceeds MaxFloat32 in magnitude, or when those products'
// magnitudes sum beyond MaxFloat32/2 (so that a partial sum may overflow in
// some order). Then, on every ISA:
//   - the result is NaN if an input is NaN, if a product is ±Inf·0, or if
//     infinite products of both signs occur;
//   - otherwise, if the infinite products all have sign s, the result is s·Inf,
//     or, when the finite products overflow, s·Inf or NaN;
//   - otherwise (every input finite) the result is within the bound above, or,
//     when the finite products overflow, NaN, ±Inf or within the bound;
//   - if every product is zero (each pair has a zero factor), the result is +0.
//
// Where the finite products overflow, which of those results comes back
// depends on the ISA and the summation order: Dot({−Inf, 1e38}, {1, 10}) is
// NaN when 1e38·10 is rounded to +Inf first and −Inf when it is fused into the
// sum. A zero result from products that are not all zero may have either sign,
// depending on the ISA: Dot({-1e-30}, {1e-30}) is +0 or −0.
//
// Dot does not allocate and is safe for concurrent use.
func Dot(x, y []float32) float32 {
	if len(x) != len(y) {
		panic(dotLen{len(x), len(y)})
	}
	return dot(x, y)
}
