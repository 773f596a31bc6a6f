//go:build !purego

package kernels

func init() {
	// Both x86 micro-kernels pack op(B) = Bᵀ with the 8×8 register transpose
	// (VEX encoded, so it runs on every AVX2 CPU).
	gemmAVX2.transpose8 = gemmTranspose8AVX2
	gemmAVX512.transpose8 = gemmTranspose8AVX2
	// Both read whole panels of a B as is in place for PackedB.Ref.
	gemmAVX2.strided, gemmAVX2.rowsStrided = gemmMicroStridedBAVX2, gemmMicroRowsStridedBAVX2
	gemmAVX512.strided, gemmAVX512.rowsStrided = gemmMicroStridedBAVX512, gemmMicroRowsStridedBAVX512
}
