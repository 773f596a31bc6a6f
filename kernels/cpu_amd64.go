//go:build !purego

package kernels

import "github.com/klauspost/cpuid/v2"

func detect() []ISA {
	isas := []ISA{Generic}
	if !cpuid.CPU.Supports(cpuid.AVX, cpuid.AVX2, cpuid.FMA3, cpuid.BMI2) {
		return isas
	}
	isas = append(isas, AVX2)
	if cpuid.CPU.Supports(cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512DQ, cpuid.AVX512VL) {
		isas = append(isas, AVX512)
	}
	return isas
}

// l2Bytes returns the size of one core's L2 cache, or 1 MiB if cpuid cannot
// tell.
func l2Bytes() int {
	if n := cpuid.CPU.Cache.L2; n > 0 {
		return n
	}
	return 1 << 20
}
