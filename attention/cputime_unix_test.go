//go:build unix

package attention

import "golang.org/x/sys/unix"

// threadCPU returns the CPU time the calling thread has used, in ns, or -1.
func threadCPU() int64 { return clockNano(unix.CLOCK_THREAD_CPUTIME_ID) }

// processCPU returns the CPU time all threads of the process have used, in
// ns, or -1.
func processCPU() int64 { return clockNano(unix.CLOCK_PROCESS_CPUTIME_ID) }

func clockNano(clock int32) int64 {
	var ts unix.Timespec
	if unix.ClockGettime(clock, &ts) != nil {
		return -1
	}
	return ts.Nano()
}
