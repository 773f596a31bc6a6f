// Package fallback holds heed's pure-Go kernels: the implementation used on
// CPUs without a SIMD path, with the purego build tag, and as the reference the
// SIMD paths are cross-checked against.
//
// The functions have the semantics of their namesakes in package kernels, which
// validates shapes before calling them; here a matrix is passed as its data, its
// stride and the lengths of the vectors that multiply it. fallback trusts the
// shapes it is given: a wrong one panics with Go's index-out-of-range error.
package fallback
