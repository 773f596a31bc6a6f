//go:build unix

package kernels

import (
	"testing"

	"github.com/heedml/heed/internal/fallback"
)

// TestCellGuard runs LSTMCell and GRUCell on operands flush against
// PROT_NONE pages, on both sides, for every H through 257: a read or write
// outside any slice crashes the test. The results must be fallback's bits.
func TestCellGuard(t *testing.T) {
	forEachGuarded(t, 4*257, 6, func(t *testing.T, n int, get func(int) []float32) {
		gates, b, c, hOut, cOut := get(4*n), get(4*n), get(n), get(n), get(n)
		wantH, wantC := make([]float32, n), make([]float32, n)
		fallback.LSTMCell(wantH, wantC, gates, b, c)
		LSTMCell(hOut, cOut, gates, b, c)
		for j := range n {
			if !sameBits(hOut[j], wantH[j]) || !sameBits(cOut[j], wantC[j]) {
				t.Fatalf("LSTMCell n=%d: c'[%d], h'[%d] = %v, %v; fallback %v, %v", n, j, j, cOut[j], hOut[j], wantC[j], wantH[j])
			}
		}
		LSTMCell(hOut, c, gates, b, c) // in place
		for j := range n {
			if !sameBits(c[j], wantC[j]) {
				t.Fatalf("LSTMCell in place n=%d: c'[%d] = %v; want %v", n, j, c[j], wantC[j])
			}
		}
	})
	forEachGuarded(t, 3*257, 6, func(t *testing.T, n int, get func(int) []float32) {
		gates, nh, bx, bh, h, hOut := get(3*n), get(n), get(3*n), get(3*n), get(n), get(n)
		want := make([]float32, n)
		fallback.GRUCell(want, gates, nh, bx, bh, h)
		GRUCell(hOut, gates, nh, bx, bh, h)
		GRUCell(h, gates, nh, bx, bh, h) // in place
		for j := range n {
			if !sameBits(hOut[j], want[j]) || !sameBits(h[j], want[j]) {
				t.Fatalf("GRUCell n=%d: h'[%d] = %v (in place %v); fallback %v", n, j, hOut[j], h[j], want[j])
			}
		}
	})
}
