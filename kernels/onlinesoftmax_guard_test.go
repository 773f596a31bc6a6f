//go:build unix

package kernels

import (
	"fmt"
	"slices"
	"testing"
)

func TestOnlineSoftmaxGuard(t *testing.T) {
	forEachGuarded(t, 300, 1, func(t *testing.T, n int, get func(int) []float32) {
		// The kernel reads and writes x flush against a guard page; the
		// result must be the bits of an unguarded copy's.
		x := get(n)
		want := append([]float32(nil), x...)
		checkOnlineSoftmax(t, fmt.Sprintf("n=%d", n), want, -1)
		wm, ws := OnlineSoftmax(want, -1)
		gm, gs := OnlineSoftmax(x, -1)
		if gm != wm || gs != ws || !slices.Equal(x, want) {
			t.Fatalf("n=%d: guarded result differs", n)
		}
	})
}

func TestOnlineSoftmaxBandGuard(t *testing.T) {
	forEachGuarded(t, 3*257, 1, func(t *testing.T, n int, get func(int) []float32) {
		// Three rows of n, the last flush against a guard page, the first
		// one score short (d = n−1): the result must be the bits of an
		// unguarded copy's.
		x := Matrix{Rows: 3, Cols: n, Stride: n, Data: get(3 * n)}
		checkBand(t, fmt.Sprintf("n=%d", n), x, n-1, []float32{-1, -1, -1})
	})
}
