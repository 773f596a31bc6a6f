package rnn

import (
	"fmt"
	"unsafe"

	"github.com/heedml/heed/kernels"
)

// overlaps reports whether a and b share an element.
func overlaps(a, b []float32) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return pa < pb+4*uintptr(len(b)) && pb < pa+4*uintptr(len(a))
}

// sameSlice reports whether a and b are the same slice: one first element and
// length.
func sameSlice(a, b []float32) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// span returns the elements of m from its first to its last, or nil when it
// has none; m is valid.
func span(m kernels.Matrix) []float32 {
	if m.Rows == 0 || m.Cols == 0 {
		return nil
	}
	return m.Data[:(m.Rows-1)*m.Stride+m.Cols]
}

// panicOverlap panics, naming the call and the two arguments that overlap.
//
//go:noinline
func panicOverlap(call, a, b string) {
	panic(fmt.Sprintf("heed/rnn: %s: %s overlaps %s", call, a, b))
}

// checkApart panics if a and b overlap.
func checkApart(call, an string, a []float32, bn string, b []float32) {
	if overlaps(a, b) {
		panicOverlap(call, an, bn)
	}
}

// checkInPlace panics if out overlaps in without being it.
func checkInPlace(call, on string, out []float32, in string, x []float32) {
	if overlaps(out, x) && !sameSlice(out, x) {
		panicOverlap(call, on, in)
	}
}
