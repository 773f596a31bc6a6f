//go:build !purego

package kernels

import "sync"

// The panel kernels of skinnyNT (kernels/DESIGN.md, "Skinny products"): X
// packed transposed, tiles of rows of A broadcast against it. AVX-512 only;
// the route's ntPanel decides (dispatch_amd64.go).

// skinnyNTPanelVectors returns the ZMM of a row of skinnyNT's panel of Xᵀ
// for batch ≤ 32 rows of X: 1 up to 16 rows, else 2.
func skinnyNTPanelVectors(batch int) int { return (batch + 15) / 16 }

// skinnyNTPanelRows returns the rows of A in a tile of the panel kernel of
// v vectors a row for A at stride lda (asmgen's skinnyNTPanelTiles): 12 for
// two; for one 16, or 12 where A's rows are a multiple of 4 KiB apart: lines
// 4 KiB apart share an L1 set on every class, and a step's 16 lines would be
// more than its ways.
func skinnyNTPanelRows(v, lda int) int {
	if v == 1 && (4*lda)%4096 != 0 {
		return 16
	}
	return 12
}

// skinnyNTPanelTakes reports whether skinnyNT's panel kernels can take
// batch rows of X of cols columns: the panel of Xᵀ spans at most a quarter
// of L2, so that it stays in L2 (its rows are read at every tile) beside
// the tiles of A passing through.
func skinnyNTPanelTakes(cols, batch int) bool {
	return 4*16*skinnyNTPanelVectors(batch)*cols <= skinnyL2()/4
}

// skinnyPanels holds the panels of Xᵀ of skinnyNT's panel route, one per
// call in flight.
var skinnyPanels = sync.Pool{New: func() any { return new([]float32) }}

// packXT sets the cols×lanes panel xt to Xᵀ for the batch×cols X at stride
// ldx: row p holds X[j][p] in lane j < batch and zeros in the others.
func packXT(xt, x []float32, ldx, batch, cols, lanes int) {
	xt = xt[:cols*lanes]
	clear(xt)
	for j := range batch {
		row := x[j*ldx : j*ldx+cols]
		for p, v := range row {
			xt[p*lanes+j] = v
		}
	}
}
