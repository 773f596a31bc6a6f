package kernels

// MatVec sets dst = A·x. It panics unless len(dst) = a.Rows and len(x) =
// a.Cols, and if dst overlaps x or the elements of A. Each dst[r] is Dot(row r
// of A, x): Dot's error bound and special-value rules. It does not allocate
// and is safe for concurrent use on disjoint dst.
func MatVec(dst []float32, a Matrix, x []float32) {
	if !a.valid() {
		a.invalid("MatVec", "a")
	}
	if len(dst) != a.Rows || len(x) != a.Cols {
		panicf("MatVec: a is %d×%d but len(dst)=%d, len(x)=%d", a.Rows, a.Cols, len(dst), len(x))
	}
	checkDisjoint("MatVec", "dst", dst, "x", x)
	checkDisjoint("MatVec", "dst", dst, "a", a.span())
	if a.Cols == 0 {
		clear(dst)
		return
	}
	matVec(dst, a.Data, a.Stride, x)
}

// MatTVec sets dst = Aᵀ·x, the x-weighted sum of the rows of A: with A the
// values and x the attention weights it builds the context vector. It is
// MatTVecAdd on a cleared dst: the same panics, bound (with dst = 0) and
// special values.
func MatTVec(dst []float32, a Matrix, x []float32) {
	checkMatTVecArgs("MatTVec", dst, a, x)
	clear(dst)
	if a.Rows == 0 || a.Cols == 0 {
		return
	}
	matTVec(dst, a.Data, a.Stride, x)
}

// MatTVecAdd sets dst += Aᵀ·x: it adds the x-weighted sum of the rows of A to
// dst. It panics unless len(dst) = a.Cols and len(x) = a.Rows, and if dst
// overlaps x or the elements of A. Each dst[c] is within
// γₙ₊₁·(|dst[c]| + Σᵣ|x[r]·A[r,c]|) of the exact result (n = a.Rows), and
// follows Dot's special-value rules for the sum dst[c]·1 + Σᵣ x[r]·A[r,c],
// except that where every term is zero the result is a zero of either sign.
// It does not allocate and is safe for concurrent use on disjoint dst.
func MatTVecAdd(dst []float32, a Matrix, x []float32) {
	checkMatTVecArgs("MatTVecAdd", dst, a, x)
	if a.Rows == 0 || a.Cols == 0 {
		return
	}
	matTVec(dst, a.Data, a.Stride, x)
}

// checkMatTVecArgs validates the arguments of MatTVec and MatTVecAdd.
func checkMatTVecArgs(kernel string, dst []float32, a Matrix, x []float32) {
	if !a.valid() {
		a.invalid(kernel, "a")
	}
	if len(dst) != a.Cols || len(x) != a.Rows {
		panicf("%s: a is %d×%d but len(dst)=%d, len(x)=%d", kernel, a.Rows, a.Cols, len(dst), len(x))
	}
	checkDisjoint(kernel, "dst", dst, "x", x)
	checkDisjoint(kernel, "dst", dst, "a", a.span())
}

// MatVecBatch sets each row b of dst to A·(row b of x), that is dst = x·Aᵀ: many
// vectors against one matrix (several queries against one key matrix), reading
// each element of A once for several vectors. It panics unless x is
// batch×a.Cols and dst is batch×a.Rows, and if dst overlaps x or a. Each
// element is a Dot of a row of A and a row of x: Dot's error bound and
// special-value rules. A batch of one is MatVec; up to 32 vectors against an
// A larger than L2 go through kernels that read A from memory once, in
// panels that every vector passes over while they are in cache or in tiles
// against all the vectors at once, with the same bound and rules. Large batches are computed as Gemm(false, true, 1, x,
// a, 0, dst), whose products are summed with fused multiply-adds and α = 1
// and β = 0 add no rounding, so the same bound and rules hold; such a call
// may run on several goroutines as Gemm does. MatVecBatch allocates nothing
// once Gemm's buffers are warm and is safe for concurrent use.
func MatVecBatch(dst Matrix, a Matrix, x Matrix) {
	if !a.valid() || !x.valid() || !dst.valid() {
		a.check("MatVecBatch", "a")
		x.check("MatVecBatch", "x")
		dst.check("MatVecBatch", "dst")
	}
	if x.Cols != a.Cols || dst.Cols != a.Rows || dst.Rows != x.Rows {
		panicf("MatVecBatch: a is %d×%d, x is %d×%d, dst is %d×%d; want x batch×%d and dst batch×%d",
			a.Rows, a.Cols, x.Rows, x.Cols, dst.Rows, dst.Cols, a.Cols, a.Rows)
	}
	checkDisjoint("MatVecBatch", "dst", dst.span(), "x", x.span())
	checkDisjoint("MatVecBatch", "dst", dst.span(), "a", a.span())
	if dst.Rows == 0 || dst.Cols == 0 {
		return
	}
	if a.Cols == 0 {
		for b := 0; b < dst.Rows; b++ {
			clear(dst.Row(b))
		}
		return
	}
	if x.Rows == 1 {
		matVec(dst.Data[:dst.Cols], a.Data, a.Stride, x.Data[:x.Cols])
		return
	}
	if skinnyNTTakes(a.Rows, a.Cols, a.Stride, x.Rows) {
		skinnyNT(dst.Data, dst.Stride, a.Data, a.Stride, x.Data, x.Stride, a.Rows, a.Cols, x.Rows, 1, 0)
		return
	}
	if matVecBatchGemm(a.Rows, a.Cols, x.Rows) {
		Gemm(NoTrans, Trans, 1, x, a, 0, dst)
		return
	}
	matVecBatch(dst.Data, dst.Stride, a.Data, a.Stride, x.Data, x.Stride, a.Rows, a.Cols, x.Rows)
}

// matVecBatchGemmMin holds where MatVecBatch takes Gemm: A of at least
// dim×dim and a batch of at least the ISA's and AVX-512 width's entry (0:
// never). Tests override it; kernels/DESIGN.md has the measurements.
var matVecBatchGemmMin = struct{ dim, avx2, avx512ymm, avx512zmm int }{64, 512, 64, 512}

// matVecBatchGemm reports whether MatVecBatch of a rows×cols A and batch
// vectors runs as Gemm (matVecBatchGemmMin).
func matVecBatchGemm(rows, cols, batch int) bool {
	lo := matVecBatchGemmBatch()
	return lo > 0 && batch >= lo && rows >= matVecBatchGemmMin.dim && cols >= matVecBatchGemmMin.dim
}
