//go:build !linux

package bench

// threadTime is unavailable here: timings use the wall clock.
func threadTime() (int64, bool) { return 0, false }
