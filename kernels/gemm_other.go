//go:build purego || !amd64

package kernels

// gemmMicroFor returns nil: Gemm uses the fallback on this build.
func gemmMicroFor(ISA) *gemmMicro { return nil }
