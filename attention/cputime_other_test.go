//go:build !unix

package attention

// threadCPU is unavailable here: TestCacheStepCPU skips.
func threadCPU() int64 { return -1 }
