package gonumblas

import (
	"sync"
	"testing"

	"gonum.org/v1/gonum/blas"

	"github.com/heedml/heed/internal/allocs"
)

// TestNoAllocs checks that the routines that use scratch space allocate
// nothing once the pool holds it.
func TestNoAllocs(t *testing.T) {
	r := newRand(11)
	const m, n, k = 40, 33, 17
	a, b, c := randMat(r, m, k, k), randMat(r, k, n, n), randMat(r, m, n, n)
	x, y := randVec(r, n, 1), randVec(r, m, 1)
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"Sgemv NoTrans β≠0", func() { impl.Sgemv(blas.NoTrans, m, k, 0.5, a, k, x[:k], 1, 2, y, 1) }},
		{"Sgemv Trans α≠1", func() { impl.Sgemv(blas.Trans, m, k, 0.5, a, k, y, 1, 2, x[:k], 1) }},
		{"Sgemm NN β≠0", func() { impl.Sgemm(blas.NoTrans, blas.NoTrans, m, n, k, 0.5, a, k, b, n, 2, c, n) }},
		{"Sgemm TT β=0", func() { impl.Sgemm(blas.Trans, blas.Trans, k, k, k, 1, a, k, b, n, 0, c, n) }},
		{"Sdot", func() { impl.Sdot(n, x, 1, x, 1) }},
		{"Sger", func() { impl.Sger(m, k, 2, y, 1, x, 1, c, n) }},
	} {
		tc.f()
		if got := allocs.Count(100, tc.f); got != 0 {
			t.Errorf("%s: %d allocations in the measured calls", tc.name, got)
		}
	}
}

// TestConcurrent runs the pooled routines from several goroutines at once;
// run with -race it checks that Implementation shares no unguarded state.
func TestConcurrent(t *testing.T) {
	const m, n, k = 37, 29, 23
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := newRand(uint64(100 + g))
			a, b := randMat(r, m, k, k), randMat(r, k, n, n)
			x := randVec(r, k, 1)
			want, got := make([]float32, m*n), make([]float32, m*n)
			wy, gy := make([]float32, m), make([]float32, m)
			// The first results, computed while the other goroutines run too,
			// must be repeated bit for bit: a scratch buffer shared between
			// goroutines would change them.
			impl.Sgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1.5, a, k, b, n, 0, want, n)
			impl.Sgemv(blas.NoTrans, m, k, 1.5, a, k, x, 1, 2, wy, 1)
			for range 50 {
				for i := range got {
					got[i] = 1
				}
				impl.Sgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1.5, a, k, b, n, 0, got, n)
				clear(gy)
				impl.Sgemv(blas.NoTrans, m, k, 1.5, a, k, x, 1, 2, gy, 1)
				if i := sameSlice(got, want); i >= 0 {
					t.Errorf("goroutine %d: C[%d]=%v, first %v", g, i, got[i], want[i])
					return
				}
				if i := sameSlice(gy, wy); i >= 0 {
					t.Errorf("goroutine %d: y[%d]=%v, first %v", g, i, gy[i], wy[i])
					return
				}
			}
		}()
	}
	wg.Wait()
}
