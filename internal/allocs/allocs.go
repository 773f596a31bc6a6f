// Package allocs counts heap allocations for heed's no-allocation tests.
//
// testing.AllocsPerRun returns the mean over its runs rounded down, so an
// allocation made in fewer calls than it runs (a buffer grown now and then, a
// cache built on a later call) reads as zero. Count counts every one.
package allocs

import (
	"runtime"
	"runtime/debug"
)

// maxWindows is how many times at most Count measures its runs.
const maxWindows = 10

// Count calls f twice to warm up, then measures the heap allocations of runs
// further calls, again and again until a measurement finds none (at most ten
// times), and returns the smallest total found. An allocation that recurs
// within any runs calls therefore shows, while the runtime's own now and then
// does not fail a test by itself: a goroutine parked on a channel or a
// WaitGroup takes a runtime object from its processor's cache and may return
// it to another's, so the caches allocate until they settle. The collector is
// off meanwhile (SetGCPercent(−1) returns once a cycle in progress has
// finished marking): a collection would empty the sync.Pools and the
// runtime's caches, and a steady-state call would allocate to refill them.
// GOMAXPROCS is left as it is, so that calls which split their work over
// goroutines do so while they are counted.
func Count(runs int, f func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	f()
	f()
	var least uint64
	for w := range maxWindows {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			f()
		}
		runtime.ReadMemStats(&after)
		if n := after.Mallocs - before.Mallocs; w == 0 || n < least {
			least = n
		}
		if least == 0 {
			break
		}
	}
	return least
}
