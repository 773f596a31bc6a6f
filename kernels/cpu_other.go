//go:build purego || !(amd64 || arm64)

package kernels

func detect() []ISA { return []ISA{Generic} }
