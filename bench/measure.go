package bench

import (
	"slices"
	"time"
)

// calibrate returns an iteration count for which run takes about round, by
// the clock that will time it (timeRound): with the wall clock, a busy
// machine that descheduled one short trial would leave a handful of
// iterations per round, whose fixed costs (entering the implementation, the
// clock itself) then dominate the time per call.
func calibrate(run func(iters int), round time.Duration, cpu bool) int {
	return calibrateBy(func(run func(int), iters int) float64 { return timeRound(run, iters, cpu) }, run, round)
}

// calibrateBy is calibrate with the time per call of run(iters) given by
// timer.
func calibrateBy(timer func(run func(int), iters int) float64, run func(iters int), round time.Duration) int {
	iters := 1
	for {
		d := timer(run, iters) * float64(iters)
		if d >= float64(round)/4 || iters >= 1<<30 {
			if d > 0 {
				iters = max(1, int(float64(iters)*float64(round)/d))
			}
			return iters
		}
		iters *= 4
	}
}

// timeRound returns the time per call of run(iters): the process's CPU time
// when cpu is set and the OS provides it, else the wall-clock time.
func timeRound(run func(iters int), iters int, cpu bool) float64 {
	if cpu {
		if _, ok := cpuTime(); ok {
			return timeBy(cpuTime, run, iters)
		}
	}
	t := time.Now()
	run(iters)
	return float64(time.Since(t).Nanoseconds()) / float64(iters)
}

// timeBy returns the time per call of run(iters) by clock (in nanoseconds;
// the caller has checked that it reads).
func timeBy(clock func() (int64, bool), run func(iters int), iters int) float64 {
	t0, _ := clock()
	run(iters)
	t1, _ := clock()
	return float64(t1-t0) / float64(iters)
}

func median(ns []float64) float64 {
	s := slices.Clone(ns)
	slices.Sort(s)
	return s[len(s)/2]
}

// Measure returns the median time per call of run over rounds rounds of about
// round each (after one calibration), in nanoseconds of wall-clock time.
func Measure(run func(iters int), round time.Duration, rounds int) float64 {
	return MeasureAll([]func(int){run}, []bool{false}, round, rounds)[0]
}

// MeasureAll measures several functions doing the same work round-robin — one
// round of each in turn, rounds times — so that interference from the rest of
// the machine falls on all of them alike, and returns each one's median time
// per call in nanoseconds.
//
// Where cpu[i] is set, run i is meant to be single-threaded and is timed by
// the process's CPU time (on Linux), so time spent waiting for a CPU that
// another process holds does not count (and work an implementation hands to
// other goroutines still does); multi-threaded runs use the wall clock.
func MeasureAll(runs []func(iters int), cpu []bool, round time.Duration, rounds int) []float64 {
	iters := make([]int, len(runs))
	for i, r := range runs {
		iters[i] = calibrate(r, round, cpu[i])
	}
	ns := make([][]float64, len(runs))
	for range rounds {
		for i, r := range runs {
			ns[i] = append(ns[i], timeRound(r, iters[i], cpu[i]))
		}
	}
	med := make([]float64, len(runs))
	for i := range ns {
		med[i] = median(ns[i])
	}
	return med
}

// best returns the shortest time per call of run over rounds rounds: a
// ceiling is an upper bound, which interference only ever lowers.
// It uses the process's CPU time, like MeasureAll for single-threaded runs.
func best(run func(iters int), round time.Duration, rounds int) float64 {
	it := calibrate(run, round, true)
	b := timeRound(run, it, true)
	for range rounds - 1 {
		b = min(b, timeRound(run, it, true))
	}
	return b
}
