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
