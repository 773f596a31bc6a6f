package bench

import "golang.org/x/sys/unix"

// threadTime returns the CPU time this OS thread has used, in nanoseconds:
// unlike the wall clock it does not advance while the thread waits for a CPU
// that other processes hold, so single-threaded timings stay comparable on a
// busy machine.
func threadTime() (int64, bool) {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0, false
	}
	return ts.Nano(), true
}
