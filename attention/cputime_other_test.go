//go:build !unix

package attention

// threadCPU and processCPU are unavailable here: the CPU-time metrics are not
// reported.
func threadCPU() int64 { return -1 }

func processCPU() int64 { return -1 }
