package attention

import (
	"fmt"
	"unsafe"

	"github.com/heedml/heed/kernels"
)

// panicf panics with a message prefixed by the package name.
//
//go:noinline
func panicf(format string, args ...any) {
	panic(fmt.Sprintf("heed/attention: "+format, args...))
}

// checkMatrix panics unless m is a valid matrix (see kernels.Matrix); mech and
// name say whose argument it is.
func checkMatrix(mech, name string, m kernels.Matrix) {
	if m.Rows < 0 || m.Cols < 0 {
		panicf("%s: %s is %d×%d: negative size", mech, name, m.Rows, m.Cols)
	}
	if m.Rows == 0 || m.Cols == 0 {
		return
	}
	if m.Rows > 1 && m.Stride < m.Cols {
		panicf("%s: %s is %d×%d with stride %d < %d columns", mech, name, m.Rows, m.Cols, m.Stride, m.Cols)
	}
	if m.Rows > 1 && m.Stride > (maxInt-m.Cols)/(m.Rows-1) {
		panicf("%s: %s is %d×%d with stride %d: size overflows int", mech, name, m.Rows, m.Cols, m.Stride)
	}
	if need := (m.Rows-1)*m.Stride + m.Cols; len(m.Data) < need {
		panicf("%s: %s is %d×%d with stride %d: len(Data)=%d < %d", mech, name, m.Rows, m.Cols, m.Stride, len(m.Data), need)
	}
}

const maxInt = int(^uint(0) >> 1)

// rows returns rows [lo, hi) of m as a matrix view.
func rows(m kernels.Matrix, lo, hi int) kernels.Matrix {
	if hi <= lo || m.Cols == 0 {
		return kernels.Matrix{Rows: hi - lo, Cols: m.Cols, Stride: m.Stride}
	}
	return kernels.Matrix{Rows: hi - lo, Cols: m.Cols, Stride: m.Stride, Data: m.Data[lo*m.Stride : (hi-1)*m.Stride+m.Cols]}
}

// cols returns columns [lo, hi) of m as a matrix view (a head's block).
func cols(m kernels.Matrix, lo, hi int) kernels.Matrix {
	if m.Rows == 0 || hi <= lo {
		return kernels.Matrix{Rows: m.Rows, Cols: hi - lo, Stride: m.Stride}
	}
	return kernels.Matrix{Rows: m.Rows, Cols: hi - lo, Stride: m.Stride, Data: m.Data[lo : (m.Rows-1)*m.Stride+hi]}
}

// row returns row i of m (length m.Cols; nil when m.Cols is 0).
func row(m kernels.Matrix, i int) []float32 {
	if m.Cols == 0 {
		return nil
	}
	return m.Data[i*m.Stride : i*m.Stride+m.Cols : i*m.Stride+m.Cols]
}

// grow returns buf resliced to n, reallocated only when its capacity is short.
func grow[T any](buf []T, n int) []T {
	if cap(buf) < n {
		return make([]T, n)
	}
	return buf[:n]
}

// span returns the elements of m from its first to its last, or nil when it
// has none; m is valid. It reads m through a pointer, as kernels' Matrix.span
// does (the reason is there).
func span(m *kernels.Matrix) []float32 {
	if m.Rows == 0 || m.Cols == 0 {
		return nil
	}
	return m.Data[:(m.Rows-1)*m.Stride+m.Cols]
}

// overlaps reports whether a and b share an element.
func overlaps(a, b []float32) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return pa < pb+4*uintptr(len(b)) && pb < pa+4*uintptr(len(a))
}

// checkDisjoint panics, naming mech and the arguments an and bn, if a and b
// overlap.
func checkDisjoint(mech, an string, a []float32, bn string, b []float32) {
	if overlaps(a, b) {
		panicf("%s: %s overlaps %s", mech, an, bn)
	}
}
