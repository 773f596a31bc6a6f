package kernels

// Scores of 8-bit keys with a quantised query (Q8Q8): the query h is stored
// in 8-bit blocks too (ToQ8, once per step, by the caller), so that each
// block's dot product is a product of two int8 vectors, an exact integer (by
// VPDPBUSD where the CPU has AVX512_VNNI). It is a different contract from
// MatVecQ8 and DotSoftmaxMatTVecQ8, whose query stays float32: the query's
// rounding adds Σ_c|k̂_c|·Scale_h/2 to each score's error (below).

// MatVecQ8Q8 sets dst = A·x̂ for a matrix of 8-bit blocks A and a vector of
// 8-bit blocks x (x̂[c] = x[c/32].Scale·x[c/32].Q[c mod 32]): each dst[r] is
// Σ_b (Scale_A·Scale_x)·P_b with P_b = Σ_i Q_A[i]·Q_x[i] the exact integer dot
// product of the two blocks' values, the product of the scales rounded once,
// within γₙ₊₂·Σ_c|Â[r,c]·x̂[c]| (n = a.Cols) of the exact product of the
// stored values, plus 2⁻¹⁴⁹·|P_b| for each block whose product of scales is
// below 2⁻¹²⁶ (float32 subnormal). Against the float32 query h that x holds
// (x = ToQ8 of h): add Σ_c|Â[r,c]|·Scale_x(c)/2, the query's rounding; against
// the float32 matrix too, add Σ_c (Scale_A(c)/2)·|h[c]| as for MatVecQ8.
// A NaN scale (in A or x) makes the row's result NaN; a product of scales
// beyond float32's range gives ±Inf or NaN.
//
// x must hold Q8Blocks(a.Cols()) blocks whose values past a.Cols() are 0 (as
// ToQ8 leaves them). It panics unless a's format is FormatQ8, len(dst) =
// a.Rows() and len(x) = Q8Blocks(a.Cols()). No allocation; safe for
// concurrent use on disjoint dst.
func MatVecQ8Q8(dst []float32, a Stored, x []Q8Block) {
	if a.format != FormatQ8 && a.rows > 0 {
		panicf("MatVecQ8Q8: a is %v; want q8", a.format)
	}
	if len(dst) != a.rows || len(x) != Q8Blocks(a.cols) {
		panicf("MatVecQ8Q8: a is %d×%d but len(dst)=%d, len(x)=%d blocks", a.rows, a.cols, len(dst), len(x))
	}
	if a.rows == 0 {
		return
	}
	if a.cols == 0 {
		clear(dst)
		return
	}
	matVecQ8Q8(dst, a.q8, a.lda, x)
}

// DotSoftmaxMatTVecQ8Q8 is DotSoftmaxMatTVecStored for keys and values in
// 8-bit blocks with the query in 8-bit blocks too (h = ToQ8 of the float32
// query, quantised once for every call of a step): the scores as MatVecQ8Q8,
// the rest as DotSoftmaxMatTVecStored. Its scores carry MatVecQ8Q8's bound,
// the query's rounding Σ_c|k̂_c|·Scale_h(c)/2 included against the float32
// query; the rest of the bound is DotSoftmaxMatTVecStored's. h must hold
// Q8Blocks(k.Cols()) blocks whose values past k.Cols() are 0.
//
// It panics unless k and v are FormatQ8, len(scores) = k.Rows() = v.Rows(),
// len(h) = Q8Blocks(k.Cols()), len(ctx) = v.Cols() and st is not nil, and if
// ctx and scores overlap. No allocation; safe for concurrent use on distinct
// ctx, scores and st.
func DotSoftmaxMatTVecQ8Q8(ctx, scores []float32, k, v Stored, h []Q8Block, st *SoftmaxState) bool {
	const name = "DotSoftmaxMatTVecQ8Q8"
	if k.format != FormatQ8 && k.rows > 0 {
		panicf("%s: k is %v; want q8", name, k.format)
	}
	stepFormats(name, k, v, st)
	if len(scores) != k.rows || v.rows != k.rows || len(h) != Q8Blocks(k.cols) || len(ctx) != v.cols {
		panicf("%s: k is %d×%d, v is %d×%d but len(scores)=%d, len(h)=%d blocks, len(ctx)=%d",
			name, k.rows, k.cols, v.rows, v.cols, len(scores), len(h), len(ctx))
	}
	checkDisjoint(name, "ctx", ctx, "scores", scores)
	k.hq = h
	return decodeStep(ctx, scores, k, v, nil, st)
}

// matVecQ8Q8Go is MatVecQ8Q8 in Go: dst[r] = Σ_b (Scale_a·Scale_x)·P_b, in
// block order.
func matVecQ8Q8Go(dst []float32, a []Q8Block, lda int, x []Q8Block) {
	for r := range dst {
		row := a[r*lda : r*lda+len(x)]
		s := float32(0)
		for b := range x {
			ka, kx := &row[b], &x[b]
			p := int32(0)
			for i := range ka.Q {
				p += int32(ka.Q[i]) * int32(kx.Q[i])
			}
			s += (ka.Scale * kx.Scale) * float32(p)
		}
		dst[r] = s
	}
}

// Q8Q8Native reports whether MatVecQ8Q8 and DotSoftmaxMatTVecQ8Q8 run their
// integer dot-product kernels under the active ISA: VPDPBUSD on AVX-512 with
// AVX512_VNNI, SDOT on NEON with the dot-product extension (FEAT_DotProd).
// When it is false they run Go loops, slower
// than MatVecQ8 and DotSoftmaxMatTVecQ8 on the float32 query, whose bound is
// within theirs: a caller that may quantise the query can take those instead.
func Q8Q8Native() bool { return intDotActive() }
