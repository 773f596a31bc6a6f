package fallback

// MatVec sets dst = A·x for the len(dst)×len(x) matrix A whose row r is
// a[r*stride : r*stride+len(x)].
func MatVec(dst, a []float32, stride int, x []float32) {
	cols := len(x)
	if cols == 0 {
		clear(dst)
		return
	}
	for r := range dst {
		dst[r] = Dot(x, a[r*stride:r*stride+cols])
	}
}

// MatTVec sets dst += Aᵀ·x for the len(x)×len(dst) matrix A whose row r is
// a[r*stride : r*stride+len(dst)]: the x-weighted sum of A's rows.
func MatTVec(dst, a []float32, stride int, x []float32) {
	cols := len(dst)
	if cols == 0 {
		return
	}
	for r, w := range x {
		Axpy(w, a[r*stride:r*stride+cols], dst)
	}
}

// MatVecBatch sets, for b < batch, row b of D to A·(row b of X), that is D = X·Aᵀ,
// for the rows×cols matrix A (stride lda), batch×cols X (stride ldx) and
// batch×rows D (stride ldd).
func MatVecBatch(d []float32, ldd int, a []float32, lda int, x []float32, ldx int, rows, cols, batch int) {
	for b := 0; b < batch; b++ {
		MatVec(d[b*ldd:b*ldd+rows], a, lda, x[b*ldx:b*ldx+cols])
	}
}

// SkinnyNT sets row b of D to A·(row b of X) for b < batch, as MatVecBatch
// does and with its bits, but over A in panels of panel ≥ 1 rows, every row
// of X passing over a panel before the next: A is read from memory once.
func SkinnyNT(d []float32, ldd int, a []float32, lda int, x []float32, ldx int, rows, cols, batch, panel int) {
	for r0 := 0; r0 < rows; r0 += panel {
		r1 := min(r0+panel, rows)
		for b := 0; b < batch; b++ {
			xb, db := x[b*ldx:b*ldx+cols], d[b*ldd:b*ldd+rows]
			for r := r0; r < r1; r++ {
				db[r] = Dot(xb, a[r*lda:r*lda+cols])
			}
		}
	}
}
