package kernels

import "fmt"

// panicf panics with a message prefixed by the package name. It is kept out of
// line so that the checks in the kernels cost one compare and branch.
//
//go:noinline
func panicf(format string, args ...any) {
	panic(fmt.Sprintf("heed/kernels: "+format, args...))
}

func checkSameLen(kernel, xn, yn string, x, y int) {
	if x != y {
		panicf("%s: len(%s)=%d != len(%s)=%d", kernel, xn, x, yn, y)
	}
}
