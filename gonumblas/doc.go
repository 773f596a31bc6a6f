// Package gonumblas makes heed's float32 kernels a drop-in BLAS for gonum and
// for code built on it (gorgonia included):
//
//	blas32.Use(gonumblas.Implementation{})
//
// Implementation implements gonum's blas.Float32 by embedding gonum's own
// implementation (gonum.org/v1/gonum/blas/gonum) and overriding Sdot, Saxpy,
// Sscal, Snrm2, Sasum, Sgemv, Sger and Sgemm. An overridden routine runs heed's
// kernels when every increment is 1, every size is positive (n ≥ 2 for
// Snrm2), the product is not among the smallest (m·n ≥ 64 for Sgemv,
// m·n·k ≥ 128 for Sgemm: below, gonum's loops cost less), α ≠ 0
// where the routine has an α, the arguments are valid and the output does not
// overlap an input. Every other call — a bad argument, a zero size, α = 0, a
// non-unit or negative increment, overlapping slices, a tiny product — is
// passed to gonum unchanged, so the panics (with gonum's messages), the quick
// returns and the results of those calls are gonum's own. The routines not
// overridden, float64 and complex ones included, are gonum's.
//
// Storage is row-major, as in blas32. β = 0 never reads y or C: a NaN or an
// Inf there is overwritten.
//
// Accuracy. The kernels sum in a different order than gonum and may fuse a
// multiply and an add, so results differ from gonum's by rounding only: an
// inner product of length n is within γₙ·Σ|xᵢ·yᵢ| of the exact value
// (γₙ = n·u/(1−n·u), u = 2⁻²⁴), as gonum's is. Sscal is bit-identical to
// gonum's. Snrm2 uses heed's dot product only when the sum of squares is a
// finite number ≥ 2⁻⁶⁰ (no overflow, and underflow changes it by at most a
// relative n·2⁻⁹⁰); otherwise, and for Inf or NaN elements, it is gonum's
// scaled, overflow-safe norm.
//
// Special values. heed propagates NaN and Inf as IEEE arithmetic does: in
// Sgemm, 0·Inf in a product gives NaN. gonum's Sgemm skips a product whose
// factor α·A[i,l] is zero for three of the four transpose cases, so where an
// Inf or a NaN in B meets a zero in A the two may differ (heed gives NaN).
// For Sgemv with Trans and β = 0, gonum clears all of len(y) when incY = 1,
// also past the n elements the call names; Implementation writes only those
// n elements. Calls passed to gonum keep gonum's defects too: gonum
// v0.17.0's amd64 Sger walks a negative-increment x or y from the start of
// the slice, backwards, reading memory before it.
//
// Allocation and concurrency. Sgemv with NoTrans and β ≠ 0, and Sgemv with
// Trans and α ≠ 1, need m floats of scratch space, and Sgemm packs its
// operands into buffers of kernels.Gemm's; both come from a sync.Pool, so a
// steady-state call allocates nothing, and the pool keeps the largest scratch
// used until the garbage collector frees it. Sgemm splits large products over
// GOMAXPROCS goroutines, as gonum's does. Implementation has no other state:
// its methods are safe for concurrent use, as gonum's are.
package gonumblas
