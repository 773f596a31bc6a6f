//go:build !purego

package kernels

import "github.com/klauspost/cpuid/v2"

// The GEMM micro-kernels of each ISA, with blocking sizes from this CPU's
// caches (kernels/GEMM.md gives the tile shapes' measurements).
var (
	gemmAVX2   = newGemmMicro(6, 16, gemmMicroAVX2)
	gemmAVX512 = newGemmMicro(6, 64, gemmMicroAVX512)
)

func newGemmMicro(mr, nr int, kern func(k int, a, b, c *float32, ldc int, alpha, beta float32)) *gemmMicro {
	mk := &gemmMicro{mr: mr, nr: nr, kern: kern}
	l1, l2, l3 := cpuid.CPU.Cache.L1D, cpuid.CPU.Cache.L2, cpuid.CPU.Cache.L3
	if l1 <= 0 {
		l1 = 32 << 10
	}
	if l2 <= 0 {
		l2 = 1 << 20
	}
	if l3 <= 0 {
		l3 = 8 << 20
	}
	mk.gemmBlocking(l1, l2, l3)
	return mk
}

// gemmMicroFor returns the micro-kernel of isa, or nil for the fallback.
func gemmMicroFor(isa ISA) *gemmMicro {
	switch isa {
	case AVX512:
		return gemmAVX512
	case AVX2:
		return gemmAVX2
	}
	return nil
}
