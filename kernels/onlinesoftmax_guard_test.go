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
