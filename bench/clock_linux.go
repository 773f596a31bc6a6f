package bench

import "golang.org/x/sys/unix"

// cpuTime returns the CPU time all threads of this process have used, in
// nanoseconds. Unlike the wall clock it does not advance while the process
// waits for a CPU that other processes hold, so single-threaded timings stay
// comparable on a busy machine; and unlike the calling thread's CPU time it
// still counts work that an implementation hands to other goroutines.
func cpuTime() (int64, bool) { return clock(unix.CLOCK_PROCESS_CPUTIME_ID) }

// threadCPUTime returns the CPU time the calling thread has used, in
// nanoseconds: for single-threaded kernels timed with their goroutine locked
// to its thread, which the runtime's other threads do not disturb as they do
// the process CPU time at small sizes.
func threadCPUTime() (int64, bool) { return clock(unix.CLOCK_THREAD_CPUTIME_ID) }

// clock reads the clock id in nanoseconds.
func clock(id int32) (int64, bool) {
	var ts unix.Timespec
	if unix.ClockGettime(id, &ts) != nil {
		return 0, false
	}
	return ts.Nano(), true
}
