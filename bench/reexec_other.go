//go:build !unix

package bench

// ReexecForOpenBLAS does nothing here: OPENBLAS_CORETYPE is the caller's to
// set.
func ReexecForOpenBLAS() error { return nil }
