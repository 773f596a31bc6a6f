//go:build !linux

package bench

// cpuTime is unavailable here: timings use the wall clock.
func cpuTime() (int64, bool) { return 0, false }

// threadCPUTime is unavailable here.
func threadCPUTime() (int64, bool) { return 0, false }
