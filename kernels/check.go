package kernels

import (
	"fmt"
	"math"
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
)

func (e dotLen) Error() string     { return lenMessage("Dot", "x", "y", e.x, e.y) }
func (e axpyLen) Error() string    { return lenMessage("Axpy", "x", "y", e.x, e.y) }
func (e expLen) Error() string     { return lenMessage("Exp", "dst", "x", e.dst, e.x) }
func (e tanhLen) Error() string    { return lenMessage("Tanh", "dst", "x", e.dst, e.x) }
func (e softmaxLen) Error() string { return lenMessage("Softmax", "dst", "x", e.dst, e.x) }

func lenMessage(kernel, xn, yn string, x, y int) string {
	return fmt.Sprintf("heed/kernels: %s: len(%s)=%d != len(%s)=%d", kernel, xn, x, yn, y)
}

// defaultNaN returns the default quiet NaN, bits 0x7FC00000.
func defaultNaN() float32 { return math.Float32frombits(0x7fc00000) }
