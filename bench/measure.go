package bench

import (
	"slices"
	"time"
)

// Measure returns the median time per call of run over rounds rounds of about
// round each (after one calibration), in nanoseconds.
func Measure(run func(iters int), round time.Duration, rounds int) float64 {
	iters := 1
	for {
		t := time.Now()
		run(iters)
		d := time.Since(t)
		if d >= round/4 || iters >= 1<<30 {
			// scale to about one round
			if d > 0 {
				iters = max(1, int(float64(iters)*float64(round)/float64(d)))
			}
			break
		}
		iters *= 4
	}
	ns := make([]float64, rounds)
	for i := range ns {
		t := time.Now()
		run(iters)
		ns[i] = float64(time.Since(t).Nanoseconds()) / float64(iters)
	}
	slices.Sort(ns)
	return ns[len(ns)/2]
}
