//go:build !unix

package attention

// threadCPU is unavailable here: the cpu-ns/op metric is not reported.
func threadCPU() int64 { return -1 }
