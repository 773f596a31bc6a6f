//go:build unix

package attention

import "golang.org/x/sys/unix"

// processCPU returns the CPU time all threads of the process have used, in
// ns, or -1.
func processCPU() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts) != nil {
		return -1
	}
	return ts.Nano()
}
