//go:build !purego

package kernels

// detect reports NEON on every arm64 CPU: Advanced SIMD is mandatory in ARMv8-A.
func detect() []ISA { return []ISA{Generic, NEON} }
