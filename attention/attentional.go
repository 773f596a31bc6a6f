package attention

import (
	"github.com/heedml/heed/internal/inuse"
	"github.com/heedml/heed/kernels"
)

// Attentional computes Luong's attentional state h̃ = tanh(W_c[c; h]) from a
// context c and a decoder state h, for W_c of size d_out×(d_c+d_h), one row
// at a time (Apply) or for many rows at once (ApplyMany, teacher forcing),
// and their backward (ApplyBackward, ApplyManyBackward). It keeps the
// concatenation buffer and the backward's scratch, so its calls allocate
// nothing once that has grown; it is not safe for concurrent use.
type Attentional struct {
	wc   kernels.Matrix
	dc   int
	x    []float32
	dz   []float32  // the backward's dz = dout∘(1 − out²): d_out, or B×d_out
	busy inuse.Flag // in race builds: a call is running
}

// NewAttentional returns the attentional-state layer with weights wc
// (d_out×(d_c+d_h)) for contexts of length dc. It panics unless
// 0 ≤ dc ≤ wc.Cols.
func NewAttentional(wc kernels.Matrix, dc int) *Attentional {
	checkMatrix("Attentional", "Wc", wc)
	if dc < 0 || dc > wc.Cols {
		panicf("Attentional: context length %d out of range [0, %d] for Wc %d×%d", dc, wc.Cols, wc.Rows, wc.Cols)
	}
	return &Attentional{wc: wc, dc: dc, x: make([]float32, wc.Cols)}
}

// Apply sets dst = tanh(W_c[c; h]). dst may overlap c and h (they are copied
// first). It panics unless len(c) = d_c, len(h) = W_c.Cols − d_c and
// len(dst) = W_c.Rows.
func (a *Attentional) Apply(dst, c, h []float32) {
	if len(c) != a.dc || len(h) != a.wc.Cols-a.dc || len(dst) != a.wc.Rows {
		panicf("Attentional: Wc is %d×%d with context length %d; got len(dst)=%d, len(c)=%d, len(h)=%d, want %d, %d, %d",
			a.wc.Rows, a.wc.Cols, a.dc, len(dst), len(c), len(h), a.wc.Rows, a.dc, a.wc.Cols-a.dc)
	}
	a.busy.Enter("attention.Attentional")
	defer a.busy.Exit()
	copy(a.x, c)
	copy(a.x[a.dc:], h)
	kernels.MatVec(dst, a.wc, a.x)
	kernels.Tanh(dst, dst)
}
