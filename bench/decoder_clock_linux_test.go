package bench

import "golang.org/x/sys/unix"

// threadCPUTime returns the CPU time the calling thread has used, in ns: the
// decoder benchmarks' single-threaded kernels are timed with it (their
// goroutine locked to its thread), which the runtime's other threads do not
// disturb as they do the process CPU time at small sizes.
func threadCPUTime() (int64, bool) {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0, false
	}
	return ts.Nano(), true
}
