package kernels

import (
	"fmt"
	"math"
	"unsafe"
)

// panicf panics with a message prefixed by the package name. It is kept out of
// line so that the checks in the kernels cost one compare and branch.
//
//go:noinline
func panicf(format string, args ...any) {
	panic(fmt.Sprintf("heed/kernels: "+format, args...))
}

// The panic values of the kernels given two slices of different lengths, one
// type per kernel: they are formatted only when printed, which keeps the check
// cheap enough for the exported wrappers to be inlined.
type (
	dotLen     struct{ x, y int }
	axpyLen    struct{ x, y int }
	expLen     struct{ dst, x int }
	tanhLen    struct{ dst, x int }
	softmaxLen struct{ dst, x int }
	scaleLen   struct{ dst, x int }
)

func (e dotLen) Error() string     { return lenMessage("Dot", "x", "y", e.x, e.y) }
func (e axpyLen) Error() string    { return lenMessage("Axpy", "x", "y", e.x, e.y) }
func (e expLen) Error() string     { return lenMessage("Exp", "dst", "x", e.dst, e.x) }
func (e tanhLen) Error() string    { return lenMessage("Tanh", "dst", "x", e.dst, e.x) }
func (e softmaxLen) Error() string { return lenMessage("Softmax", "dst", "x", e.dst, e.x) }
func (e scaleLen) Error() string   { return lenMessage("Scale", "dst", "x", e.dst, e.x) }

func lenMessage(kernel, xn, yn string, x, y int) string {
	return fmt.Sprintf("heed/kernels: %s: len(%s)=%d != len(%s)=%d", kernel, xn, x, yn, y)
}

// defaultNaN returns the default quiet NaN, bits 0x7FC00000.
func defaultNaN() float32 { return math.Float32frombits(0x7fc00000) }

// overlaps reports whether a and b share an element.
func overlaps(a, b []float32) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return pa < pb+4*uintptr(len(b)) && pb < pa+4*uintptr(len(a))
}

// shifted reports whether a and b overlap without starting at the same
// element: the aliasing that the kernels allowing dst to be an input forbid.
func shifted(a, b []float32) bool {
	d := uintptr(unsafe.Pointer(unsafe.SliceData(a))) - uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return d != 0 && (d < 4*uintptr(len(b)) || -d < 4*uintptr(len(a)))
}

// aliasError is the panic value of a kernel given slices a and b that
// overlap in a way it forbids: b overlapping a without being it (shifted),
// or overlapping at all (apart). It is formatted only when printed, which
// keeps the checks cheap enough to inline.
type aliasError struct {
	kernel, a, b string
	shifted      bool
}

func (e aliasError) Error() string {
	if e.shifted {
		return "heed/kernels: " + e.kernel + ": " + e.a + " overlaps " + e.b + " without being it"
	}
	return "heed/kernels: " + e.kernel + ": " + e.a + " overlaps " + e.b
}

// checkAlias panics unless dst and x are the same slice or disjoint.
func checkAlias(kernel string, dst []float32, xn string, x []float32) {
	if shifted(dst, x) {
		panic(aliasError{kernel, "dst", xn, true})
	}
}

// checkDisjoint panics if a and b (named an and bn) overlap.
func checkDisjoint(kernel, an string, a []float32, bn string, b []float32) {
	if overlaps(a, b) {
		panic(aliasError{kernel, an, bn, false})
	}
}
