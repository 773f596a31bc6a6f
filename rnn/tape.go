package rnn

import (
	"github.com/heedml/heed/kernels"
)

// seqWork is what the tapes of both cells share: the sequence's shape, the
// products' scratch and the packed recurrent weights (packed again by every
// Forward and Backward, as the weights change between training steps).
type seqWork struct {
	steps, batch int
	in, hidden   int
	filled       bool // a Forward has run
	scratch      kernels.GemmScratch
	packed       [2]kernels.PackedB
	hPrev        []float32 // T·B × H: h_{t−1} of each step, step-major (h_0 first)
	dh           []float32 // B × H: the gradient of the state being propagated
	nh           []float32 // B × H: GRU's W_nh·h of a step
	ones         []float32 // T·B ones: the bias gradients' column sums
}

// mat returns the rows×cols matrix over s (stride cols).
func mat(s []float32, rows, cols int) kernels.Matrix {
	return kernels.Matrix{Rows: rows, Cols: cols, Stride: cols, Data: s[:rows*cols]}
}

// rowsOf returns rows [r0, r1) of m.
func rowsOf(m kernels.Matrix, r0, r1 int) kernels.Matrix {
	if r1 == r0 || m.Cols == 0 {
		return kernels.Matrix{Rows: r1 - r0, Cols: m.Cols, Stride: m.Stride}
	}
	return kernels.Matrix{Rows: r1 - r0, Cols: m.Cols, Stride: m.Stride, Data: m.Data[r0*m.Stride:]}
}

// colsOf returns columns [c0, c1) of m.
func colsOf(m kernels.Matrix, c0, c1 int) kernels.Matrix {
	if m.Rows == 0 || c1 == c0 {
		return kernels.Matrix{Rows: m.Rows, Cols: c1 - c0, Stride: m.Stride}
	}
	return kernels.Matrix{Rows: m.Rows, Cols: c1 - c0, Stride: m.Stride, Data: m.Data[c0:]}
}

// copyRows copies src into dst, row by row (the same shape).
func copyRows(dst, src kernels.Matrix) {
	for r := range src.Rows {
		copy(dst.Row(r), src.Row(r))
	}
}

// addRows sets dst += src, row by row (the same shape), one rounding per
// element (kernels.Add).
func addRows(dst, src kernels.Matrix) {
	for r := range src.Rows {
		d := dst.Row(r)
		kernels.Add(d, d, src.Row(r))
	}
}

// wanted reports whether an optional matrix argument is given.
func wanted(m kernels.Matrix) bool { return m.Rows > 0 && m.Cols > 0 }

// validOrEmpty reports whether m is absent (no rows and no columns: not
// given) or a valid rows×cols matrix.
func validOrEmpty(m kernels.Matrix, rows, cols int) bool {
	return m.Rows == 0 && m.Cols == 0 || valid(m, rows, cols)
}

// grow sizes the tape's shared buffers for T steps of B sequences.
func (w *seqWork) grow(T, B, in, hidden int) {
	w.steps, w.batch, w.in, w.hidden = T, B, in, hidden
	w.hPrev = grow(w.hPrev, T*B*hidden)
	w.dh = grow(w.dh, B*hidden)
	if n := T * B; len(w.ones) != n {
		w.ones = grow(w.ones, n)
		for i := range w.ones {
			w.ones[i] = 1
		}
	}
}

// named is an argument of a call, for the overlap checks.
type named struct {
	name string
	s    []float32
}

// checkAll panics, naming the call and the two arguments, if two outputs
// overlap or an output overlaps an input, except that outs[i] may be exactly
// ins[j] where inPlace(i, j).
func checkAll(call string, outs, ins []named, inPlace func(i, j int) bool) {
	for i, o := range outs {
		for _, p := range outs[i+1:] {
			checkApart(call, o.name, o.s, p.name, p.s)
		}
		for j, in := range ins {
			if inPlace != nil && inPlace(i, j) {
				checkInPlace(call, o.name, o.s, in.name, in.s)
				continue
			}
			checkApart(call, o.name, o.s, in.name, in.s)
		}
	}
}
