//go:build !unix

package attention

// processCPU is unavailable here: the CPU-time metrics are not reported.
func processCPU() int64 { return -1 }
