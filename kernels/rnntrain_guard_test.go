//go:build unix

package kernels

import (
	"testing"

	"github.com/heedml/heed/internal/fallback"
)

// TestCellTrainGuard runs the four training kernels on operands flush
// against PROT_NONE pages, on both sides, for every H through 257: a read or
// write outside any slice crashes the test. The results must be fallback's
// bits, in place too.
func TestCellTrainGuard(t *testing.T) {
	forEachGuarded(t, 5*257, 6, func(t *testing.T, n int, get func(int) []float32) {
		gates, b, c, hOut, cOut, act := get(4*n), get(4*n), get(n), get(n), get(n), get(5*n)
		wh, wc, wa := make([]float32, n), make([]float32, n), make([]float32, 5*n)
		fallback.LSTMCellTrain(wh, wc, wa, gates, b, c)
		LSTMCellTrain(hOut, cOut, act, gates, b, c)
		sameAll(t, "LSTMCellTrain h'", hOut, wh)
		sameAll(t, "LSTMCellTrain c'", cOut, wc)
		sameAll(t, "LSTMCellTrain act", act, wa)
		LSTMCellTrain(hOut, c, act, gates, b, c) // in place
		sameAll(t, "LSTMCellTrain c' in place", c, wc)
	})
	forEachGuarded(t, 5*257, 6, func(t *testing.T, n int, get func(int) []float32) {
		dG, dcPrev, act, cPrev, dh, dc := get(4*n), get(n), get(5*n), get(n), get(n), get(n)
		wG, wc := make([]float32, 4*n), make([]float32, n)
		fallback.LSTMCellBackward(wG, wc, act, cPrev, dh, dc)
		LSTMCellBackward(dG, dcPrev, act, cPrev, dh, dc)
		sameAll(t, "LSTMCellBackward dGates", dG, wG)
		sameAll(t, "LSTMCellBackward dcPrev", dcPrev, wc)
		LSTMCellBackward(dG, dc, act, cPrev, dh, dc) // in place
		sameAll(t, "LSTMCellBackward dcPrev in place", dc, wc)
	})
	forEachGuarded(t, 4*257, 6, func(t *testing.T, n int, get func(int) []float32) {
		gates, nh, bx, bh, h, act := get(3*n), get(n), get(3*n), get(3*n), get(n), get(4*n)
		hOut := make([]float32, n)
		wh, wa := make([]float32, n), make([]float32, 4*n)
		fallback.GRUCellTrain(wh, wa, gates, nh, bx, bh, h)
		GRUCellTrain(hOut, act, gates, nh, bx, bh, h)
		sameAll(t, "GRUCellTrain act", act, wa)
		GRUCellTrain(h, act, gates, nh, bx, bh, h) // in place
		sameAll(t, "GRUCellTrain h'", hOut, wh)
		sameAll(t, "GRUCellTrain h' in place", h, wh)
	})
	forEachGuarded(t, 4*257, 6, func(t *testing.T, n int, get func(int) []float32) {
		dGx, dGh, dhPrev, act, h, dh := get(3*n), get(3*n), get(n), get(4*n), get(n), get(n)
		wx, wh, wp := make([]float32, 3*n), make([]float32, 3*n), make([]float32, n)
		fallback.GRUCellBackward(wx, wh, wp, act, h, dh)
		GRUCellBackward(dGx, dGh, dhPrev, act, h, dh)
		sameAll(t, "GRUCellBackward dGx", dGx, wx)
		sameAll(t, "GRUCellBackward dGh", dGh, wh)
		sameAll(t, "GRUCellBackward dhPrev", dhPrev, wp)
		GRUCellBackward(dGx, dGh, dh, act, h, dh) // in place
		sameAll(t, "GRUCellBackward dhPrev in place", dh, wp)
	})
}
