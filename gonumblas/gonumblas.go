package gonumblas

import (
	"sync"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// Implementation is gonum's float32 BLAS with the routines heed computes faster
// replaced by heed's kernels. The zero value is ready to use; see the package
// documentation for what runs where.
type Implementation struct {
	gonum.Implementation
}

// Implementation is a whole BLAS: gorgonia's gorgonia.Use takes all four
// precisions, and those heed does not compute are gonum's.
var _ interface {
	blas.Float32
	blas.Float64
	blas.Complex64
	blas.Complex128
} = Implementation{}

// Below these sizes gonum's own loops cost less than the fixed cost of heed's
// kernels, so the calls stay gonum's (DESIGN.md has the measurement). They are
// variables so that the tests can route every size through heed.
var (
	gemvMinWork = 64  // Sgemv with m·n below it is gonum's
	gemmMinWork = 128 // Sgemm with m·n·k below it is gonum's
)

// buffers holds scratch slices (*[]float32) for the routines that need them.
var buffers sync.Pool

// getBuf returns a pooled slice of length n; give it back with putBuf.
func getBuf(n int) *[]float32 {
	p, _ := buffers.Get().(*[]float32)
	if p == nil {
		p = new([]float32)
	}
	if cap(*p) < n {
		*p = make([]float32, n)
	}
	*p = (*p)[:n]
	return p
}

func putBuf(p *[]float32) { buffers.Put(p) }

// overlap reports whether the memory of a and b intersects; both are non-empty.
func overlap(a, b []float32) bool {
	pa := uintptr(unsafe.Pointer(unsafe.SliceData(a)))
	pb := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	const size = unsafe.Sizeof(float32(0))
	return pa < pb+uintptr(len(b))*size && pb < pa+uintptr(len(a))*size
}

// span returns the elements of a rows×cols row-major matrix with stride ld,
// padding between rows included; rows, cols ≥ 1 and the matrix fits in a.
func span(a []float32, rows, cols, ld int) []float32 { return a[:(rows-1)*ld+cols] }

// isTrans reports whether t is one of gonum's transposing values.
func isTrans(t blas.Transpose) bool { return t == blas.Trans || t == blas.ConjTrans }

// validTrans reports whether gonum accepts t.
func validTrans(t blas.Transpose) bool {
	return t == blas.NoTrans || t == blas.Trans || t == blas.ConjTrans
}
