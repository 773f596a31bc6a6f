//go:build !unix

package kernels

// threadCPU is unavailable here: the cpu-ns/op metric is not reported.
func threadCPU() int64 { return -1 }
