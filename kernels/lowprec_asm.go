//go:build (amd64 || arm64) && !purego

package kernels

import "unsafe"

// matVecHalfTail adds to each dst[r] the products of columns n.. of row r of
// the 16-bit matrix at a (stride lda) with x[n:].
func matVecHalfTail(dst []float32, a []uint16, lda int, x []float32, n int, widen func(uint16) float32) {
	for r := range dst {
		row := a[r*lda+n : r*lda+len(x)]
		s := float32(0)
		for i, h := range row {
			s += widen(h) * x[n+i]
		}
		dst[r] += s
	}
}

// matVecQ8Tail adds to each dst[r] the product of the block of row r that
// starts at column n (a multiple of 32) with x[n:].
func matVecQ8Tail(dst []float32, a []Q8Block, lda int, x []float32, n int) {
	b := n / Q8BlockLen
	for r := range dst {
		blk := &a[r*lda+b]
		p := float32(0)
		for i, v := range x[n:] {
			p += float32(blk.Q[i]) * v
		}
		dst[r] += blk.Scale * p
	}
}

// q8Bytes views blocks as their bytes.
func q8Bytes(a []Q8Block) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(a))), len(a)*int(unsafe.Sizeof(Q8Block{})))
}
