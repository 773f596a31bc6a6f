//go:build !linux

package bench

// threadCPUTime is unavailable here.
func threadCPUTime() (int64, bool) { return 0, false }
