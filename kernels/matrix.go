package kernels

import mathbits "math/bits"

// Matrix is a row-major view of a float32 matrix: element (i, j) is
// Data[i*Stride+j]. Its layout is that of gonum's blas32.General, which
// converts to Matrix directly: kernels.Matrix(g).
//
// A valid Matrix has Rows, Cols ≥ 0, Stride ≥ Cols when Rows > 1, and
// len(Data) ≥ (Rows−1)·Stride + Cols when Rows, Cols > 0. Kernels touch only
// the Rows×Cols elements, never the padding between rows or past the last one.
type Matrix struct {
	Rows, Cols int
	Stride     int
	Data       []float32
}

// Row returns row i as a slice of length Cols.
func (m Matrix) Row(i int) []float32 {
	if i < 0 || i >= m.Rows {
		panicf("Matrix.Row: row %d out of range [0, %d)", i, m.Rows)
	}
	if m.Cols == 0 {
		return nil
	}
	return m.Data[i*m.Stride : i*m.Stride+m.Cols : i*m.Stride+m.Cols]
}

// span returns the elements from m's first to its last, or nil when it has
// none; m is valid. It reads m's fields through a pointer: a value receiver
// copies a Matrix argument to the stack in 16-byte halves that the method
// reads back as 8-byte fields, which stalls store-to-load forwarding, a cost
// that shows in the calls of small kernels.
func (m *Matrix) span() []float32 {
	if m.Rows == 0 || m.Cols == 0 {
		return nil
	}
	return m.Data[:(m.Rows-1)*m.Stride+m.Cols]
}

// check panics unless m is a valid matrix; name is the argument's name in
// kernel's message. The kernels of small calls test valid inline instead
// and call invalid only when it fails.
func (m *Matrix) check(kernel, name string) {
	if !m.valid() {
		m.invalid(kernel, name)
	}
}

// valid reports whether m is a valid matrix with sizes below 2^(w/2−1) for a
// w-bit int (no product of two can overflow); false calls for invalid,
// which decides for larger sizes.
func (m *Matrix) valid() bool {
	return uint(m.Rows|m.Cols|m.Stride) < halfInt && (m.Rows == 0 || m.Cols == 0 ||
		(m.Rows == 1 || m.Stride >= m.Cols) && len(m.Data) >= (m.Rows-1)*m.Stride+m.Cols)
}

// halfInt bounds the sizes whose products check computes without an
// overflow test.
const halfInt = 1 << (mathbits.UintSize/2 - 1)

// invalid is check for any sizes: it panics unless m is valid, the size
// (Rows−1)·Stride + Cols checked for overflow with a full 128-bit product.
//
//go:noinline
func (m *Matrix) invalid(kernel, name string) {
	if m.Rows < 0 || m.Cols < 0 {
		panicf("%s: %s is %d×%d: negative size", kernel, name, m.Rows, m.Cols)
	}
	if m.Rows == 0 || m.Cols == 0 {
		return
	}
	if m.Rows > 1 && m.Stride < m.Cols {
		panicf("%s: %s is %d×%d with stride %d < %d columns", kernel, name, m.Rows, m.Cols, m.Stride, m.Cols)
	}
	if hi, lo := mathbits.Mul64(uint64(m.Rows-1), uint64(m.Stride)); hi != 0 || lo > uint64(maxInt-m.Cols) {
		panicf("%s: %s is %d×%d with stride %d: size overflows int", kernel, name, m.Rows, m.Cols, m.Stride)
	}
	if need := (m.Rows-1)*m.Stride + m.Cols; len(m.Data) < need {
		panicf("%s: %s is %d×%d with stride %d: len(%s.Data)=%d < %d", kernel, name, m.Rows, m.Cols, m.Stride, name, len(m.Data), need)
	}
}

const maxInt = int(^uint(0) >> 1)
