//go:build unix

package attention

import "golang.org/x/sys/unix"

// threadCPU returns the CPU time the calling thread has used, in ns.
func threadCPU() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return -1
	}
	return ts.Nano()
}
