package fallback

// gemmCols is the width of the column strip whose sums Gemm keeps in float64.
const gemmCols = 64

// Gemm sets C = α·op(A)·op(B) + β·C for the m×n matrix C (row stride ldc),
// where op(A) is m×k and op(B) is k×n. Element (i, p) of op(A) is
// a[i*lda+p], or a[p*lda+i] when transA; element (p, j) of op(B) is
// b[p*ldb+j], or b[j*ldb+p] when transB.
//
// Products and sums are formed in float64 (a float32 product is exact there)
// and each element of C is rounded to float32 once, so it is within
// u·(|α|·Σₚ|a·b| + |β·c|) plus a float64 term k·2⁻⁵³·|α|·Σₚ|a·b| of the exact
// result. β = 0 does not read C and α = 0 reads neither A nor B; the caller
// has checked the shapes.
func Gemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if alpha == 0 || k == 0 {
		for i := 0; i < m; i++ {
			row := c[i*ldc : i*ldc+n]
			if beta == 0 {
				clear(row)
				continue
			}
			for j := range row {
				row[j] = float32(float64(beta) * float64(row[j]))
			}
		}
		return
	}
	// Strides of op(A) and op(B) along their rows and columns.
	ar, ac := lda, 1
	if transA {
		ar, ac = 1, lda
	}
	br, bc := ldb, 1
	if transB {
		br, bc = 1, ldb
	}
	var acc [gemmCols]float64
	for j0 := 0; j0 < n; j0 += gemmCols {
		w := min(gemmCols, n-j0)
		s := acc[:w]
		for i := 0; i < m; i++ {
			clear(s)
			for p := 0; p < k; p++ {
				aip := float64(a[i*ar+p*ac])
				bp := p*br + j0*bc
				if bc == 1 {
					row := b[bp : bp+w]
					for j, v := range row {
						s[j] += aip * float64(v)
					}
				} else {
					for j := range s {
						s[j] += aip * float64(b[bp+j*bc])
					}
				}
			}
			row := c[i*ldc+j0 : i*ldc+j0+w]
			for j := range row {
				v := float64(alpha) * s[j]
				if beta != 0 {
					v += float64(beta) * float64(row[j])
				}
				row[j] = float32(v)
			}
		}
	}
}
