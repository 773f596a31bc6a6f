//go:build !purego

package kernels

import "unsafe"

// bytes returns the matrix's data as bytes and its row stride in bytes.
func (m Stored) bytes() ([]byte, int) {
	if m.format == FormatQ8 {
		return q8Bytes(m.q8), 36 * m.lda
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(m.u16))), 2*len(m.u16)), 2 * m.lda
}
