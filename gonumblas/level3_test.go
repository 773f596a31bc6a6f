package gonumblas

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/blas"
)

type gemmCase struct {
	tA, tB      blas.Transpose
	m, n, k     int
	pad         int
	alpha, beta float32
}

// gemmDims are the sizes Sgemm's test sweeps in each of m, n and k.
var gemmDims = []int{0, 1, 2, 3, 7, 16, 17, 33, 65}

func TestSgemm(t *testing.T) { eachISA(t, testSgemm) }

func testSgemm(t *testing.T) {
	var cases []gemmCase
	ab := [][2]float32{{1, 0}, {-2.25, 0.5}, {0.5, 1}, {0, 0.5}, {0, 0}, {1, -1}}
	i := 0
	for _, tA := range transposes {
		for _, tB := range transposes {
			for _, m := range gemmDims {
				for _, n := range gemmDims {
					for _, k := range gemmDims {
						s := ab[i%len(ab)]
						i++
						cases = append(cases, gemmCase{tA, tB, m, n, k, i % 3, s[0], s[1]})
					}
				}
			}
			for _, s := range ab {
				cases = append(cases, gemmCase{tA, tB, 70, 69, 67, 1, s[0], s[1]})
			}
			for s := 0; s <= 70; s++ { // every size in each dimension
				cases = append(cases, gemmCase{tA, tB, s, 9, 13, 1, 1.5, 0.5},
					gemmCase{tA, tB, 9, s, 13, 0, -1, 0}, gemmCase{tA, tB, 13, 9, s, 2, 1, 1})
			}
			cases = append(cases, gemmCase{tA, tB, 130, 129, 200, 0, 1, 0}, gemmCase{tA, tB, 1, 300, 129, 3, 0.5, 1})
		}
	}
	r := newRand(8)
	for _, c := range cases {
		aT, bT := c.tA != blas.NoTrans, c.tB != blas.NoTrans
		ar, ac := c.m, c.k
		if aT {
			ar, ac = c.k, c.m
		}
		br, bc := c.k, c.n
		if bT {
			br, bc = c.n, c.k
		}
		lda, ldb, ldc := max(ac, 1)+c.pad, max(bc, 1)+2*c.pad, max(c.n, 1)+c.pad
		a, b, cm := randMat(r, ar, ac, lda), randMat(r, br, bc, ldb), randMat(r, c.m, c.n, ldc)
		if c.beta == 0 && c.m > 0 && c.n > 0 {
			cm[0] = float32(math.NaN()) // must be overwritten, not read
			cm[(c.m-1)*ldc+c.n-1] = float32(math.Inf(-1))
		}
		got, want := append([]float32(nil), cm...), append([]float32(nil), cm...)
		impl.Sgemm(c.tA, c.tB, c.m, c.n, c.k, c.alpha, a, lda, b, ldb, c.beta, got, ldc)
		ref.Sgemm(c.tA, c.tB, c.m, c.n, c.k, c.alpha, a, lda, b, ldb, c.beta, want, ldc)
		opA := func(i, l int) float64 {
			if aT {
				return float64(a[l*lda+i])
			}
			return float64(a[i*lda+l])
		}
		opB := func(l, j int) float64 {
			if bT {
				return float64(b[j*ldb+l])
			}
			return float64(b[l*ldb+j])
		}
	rows:
		for i := range c.m {
			for j := range c.n {
				var exact, abs float64
				if c.beta != 0 {
					exact = float64(c.beta) * float64(cm[i*ldc+j])
					abs = math.Abs(exact)
				}
				for l := range c.k {
					p := float64(c.alpha) * opA(i, l) * opB(l, j)
					exact += p
					abs += math.Abs(p)
				}
				bound := gamma(c.k+3) * abs
				if !within(got[i*ldc+j], exact, bound) || !within(want[i*ldc+j], exact, bound) {
					t.Errorf("Sgemm %+v: C[%d,%d]=%v, gonum %v, exact %v, bound %g", c, i, j, got[i*ldc+j], want[i*ldc+j], exact, bound)
					break rows
				}
			}
		}
		if c.alpha == 0 || c.m == 0 || c.n == 0 || c.k == 0 {
			if i := sameSlice(got, want); i >= 0 {
				t.Errorf("Sgemm %+v: differs from gonum at %d (must be gonum's)", c, i)
			}
		}
		for i := range got {
			if cm[i] == sentinel && got[i] != sentinel {
				t.Errorf("Sgemm %+v: wrote c[%d] outside the matrix", c, i)
				break
			}
		}
	}
}

// TestSgemmSpecial checks NaN and Inf in A or B against IEEE arithmetic: a
// NaN factor makes its row (A) or column (B) of C NaN, as gonum does where it
// multiplies; Inf·0 is NaN, where gonum may skip the zero factor.
func TestSgemmSpecial(t *testing.T) { eachISA(t, testSgemmSpecial) }

func testSgemmSpecial(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	const m, n, k = 3, 4, 5
	for _, tA := range transposes {
		for _, tB := range transposes {
			r := newRand(10)
			a, b := randMat(r, m*k, 1, 1), randMat(r, k*n, 1, 1)
			// A[1,2] = NaN; B[3,1] = +Inf with A[0,3] = 0 and A[2,3] = 1.
			setA := func(i, l int, v float32) {
				if tA == blas.NoTrans {
					a[i*k+l] = v
				} else {
					a[l*m+i] = v
				}
			}
			setA(1, 2, nan)
			setA(0, 3, 0)
			setA(2, 3, 1)
			if tB == blas.NoTrans {
				b[3*n+1] = inf
			} else {
				b[1*k+3] = inf
			}
			lda, ldb := k, n
			if tA != blas.NoTrans {
				lda = m
			}
			if tB != blas.NoTrans {
				ldb = k
			}
			c := make([]float32, m*n)
			impl.Sgemm(tA, tB, m, n, k, 1, a, lda, b, ldb, 0, c, n)
			for i := range m {
				for j := range n {
					v := c[i*n+j]
					switch {
					case i == 1 || i == 0 && j == 1: // NaN row; 0·Inf
						checkf(t, math.IsNaN(float64(v)), "Sgemm %c%c: C[%d,%d]=%v, want NaN", tA, tB, i, j, v)
					case i == 2 && j == 1:
						checkf(t, math.IsInf(float64(v), 1), "Sgemm %c%c: C[%d,%d]=%v, want +Inf", tA, tB, i, j, v)
					default:
						checkf(t, !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0), "Sgemm %c%c: C[%d,%d]=%v, want finite", tA, tB, i, j, v)
					}
				}
			}
		}
	}
}

// TestSgemmShared checks C = α·A·Aᵀ + β·C and C = α·Aᵀ·A + β·C with A passed
// as both operands (the same slice), against gonum within Sgemm's bound.
func TestSgemmShared(t *testing.T) {
	r := newRand(13)
	for _, s := range []int{1, 5, 33, 70} {
		const k = 19
		a := randMat(r, s, k, k)
		for _, tc := range []struct{ tA, tB blas.Transpose }{{blas.NoTrans, blas.Trans}, {blas.Trans, blas.NoTrans}} {
			m, kk := s, k
			if tc.tA == blas.Trans {
				m, kk = k, s
			}
			c := randMat(r, m, m, m)
			got, want := append([]float32(nil), c...), append([]float32(nil), c...)
			impl.Sgemm(tc.tA, tc.tB, m, m, kk, -0.5, a, k, a, k, 2, got, m)
			ref.Sgemm(tc.tA, tc.tB, m, m, kk, -0.5, a, k, a, k, 2, want, m)
			for i := range m {
				for j := range m {
					exact := 2 * float64(c[i*m+j])
					abs := math.Abs(exact)
					for l := range kk {
						var p float64
						if tc.tA == blas.NoTrans {
							p = -0.5 * float64(a[i*k+l]) * float64(a[j*k+l])
						} else {
							p = -0.5 * float64(a[l*k+i]) * float64(a[l*k+j])
						}
						exact += p
						abs += math.Abs(p)
					}
					bound := gamma(kk+3) * abs
					checkf(t, within(got[i*m+j], exact, bound) && within(want[i*m+j], exact, bound),
						"Sgemm %c%c s=%d: C[%d,%d]=%v, gonum %v, exact %v", tc.tA, tc.tB, s, i, j, got[i*m+j], want[i*m+j], exact)
				}
			}
		}
	}
}
