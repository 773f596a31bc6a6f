package bench

import "golang.org/x/sys/unix"

// cpuTime returns the CPU time all threads of this process have used, in
// nanoseconds. Unlike the wall clock it does not advance while the process
// waits for a CPU that other processes hold, so single-threaded timings stay
// comparable on a busy machine; and unlike the calling thread's CPU time it
// still counts work that an implementation hands to other goroutines.
func cpuTime() (int64, bool) {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts) != nil {
		return 0, false
	}
	return ts.Nano(), true
}
