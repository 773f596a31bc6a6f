//go:build amd64 && !purego

package bench

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/heedml/heed/kernels"
)

// BenchmarkPaired measures heed's GEMM rows (under each ISA), OpenBLAS's (in
// a build with -tags heedcgo) and heed's prefill rows (under the widest ISA)
// as fractions of bench's FMA probe measured beside them (the probe's variant
// that reached the FMA peak of the ISA, gemmPeaks). Each round runs a
// slice of the probe of the row's ISA (the widest for OpenBLAS) and a slice
// of the row, about pairedSlice each, both timed by the CPU clock of the
// benchmark's thread, to which it is locked (pairedClock); the round's
// fraction is the row's GFLOP/s over the probe's, and the benchmark reports
// the median of the rounds ("of-probe") and its quartiles.
// Where the machine's throughput drifts between phases of seconds (a shared
// VM), this pairs each row with the machine's state of its moment, while
// GemmPeers' "of-ceiling" divides by the best probe of one earlier moment.
// Run it with GOMAXPROCS=1 and -benchtime 1x (each iteration is a whole
// measurement of pairedRounds rounds).
func BenchmarkPaired(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	prev := kernels.Active()
	defer kernels.Use(prev)
	widest := widestISA()
	for _, s := range GemmShapes {
		a, bm, c := gemmOperands(rng, s)
		for _, isa := range kernels.Supported() {
			if isa == kernels.Generic {
				continue
			}
			b.Run("gemm/"+s.Name+"/heed-"+isa.String(), func(b *testing.B) {
				kernels.Use(isa)
				paired(b, isa, s.Flops(), func() { GemmPeers[0].Gemm(s.TransB, a, bm, c) })
			})
		}
		for _, p := range GemmPeers[1:] {
			if p.Name != "openblas" {
				continue
			}
			b.Run("gemm/"+s.Name+"/"+p.Name, func(b *testing.B) {
				kernels.Use(prev)
				p.Enter()
				paired(b, widest, s.Flops(), func() { p.Gemm(s.TransB, a, bm, c) })
			})
		}
	}
	for _, s := range PrefillShapes {
		in := NewPrefillInputs(rand.New(rand.NewPCG(1, 2)), s)
		b.Run("prefill/"+s.String()+"/heed-"+widest.String(), func(b *testing.B) {
			kernels.Use(widest)
			paired(b, widest, s.Flops(), in.Heed)
		})
	}
}

// pairedRounds and pairedSlice are BenchmarkPaired's rounds and the time each
// half of a round takes.
const (
	pairedRounds = 30
	pairedSlice  = 10 * time.Millisecond
)

// pairedClock returns the clock BenchmarkPaired times its slices by, locking
// the calling goroutine to its thread (the caller unlocks it): with one P,
// that thread's CPU time. The process's CPU time would count the runtime's
// other threads, which after each of OpenBLAS's cgo calls spin on the second
// core while the next slice runs: the probe after an OpenBLAS slice measured
// 170–187 GFLOP/s by the process's clock, 204–219 by the thread's, against
// 221–232 by either after a heed slice (Zen 5, n = 1024), so OpenBLAS's rows
// read 1.01–1.07 of a probe slowed by the clock. With more than one P
// (goroutines of the row on other threads) it is the process's CPU time.
func pairedClock() func() (int64, bool) {
	runtime.LockOSThread()
	if _, ok := threadCPUTime(); ok && runtime.GOMAXPROCS(0) == 1 {
		return threadCPUTime
	}
	return cpuTime
}

// paired runs BenchmarkPaired's rounds for one row: f does flops
// floating-point operations, isa's probe is the ceiling.
func paired(b *testing.B, isa kernels.ISA, flops float64, f func()) {
	clock := pairedClock()
	defer runtime.UnlockOSThread()
	if _, ok := clock(); !ok {
		b.Skip("no CPU clock")
	}
	slice := func(run func(int), iters int) float64 { return timeBy(clock, run, iters) }
	probe, probeFlops := fmaProbe(isa)
	runProbe := func(iters int) { sink = probe(iters, 1) }
	runRow := func(iters int) {
		for range iters {
			f()
		}
	}
	f()
	pi := calibrateBy(slice, runProbe, pairedSlice)
	ri := calibrateBy(slice, runRow, pairedSlice)
	b.ResetTimer()
	var fr []float64
	for range b.N {
		for range pairedRounds {
			p := float64(probeFlops) / slice(runProbe, pi)
			r := flops / slice(runRow, ri)
			fr = append(fr, r/p)
		}
	}
	slices.Sort(fr)
	n := len(fr)
	b.ReportMetric(fr[n/2], "of-probe")
	b.ReportMetric(fr[n/4], "of-probe-q1")
	b.ReportMetric(fr[3*n/4], "of-probe-q3")
	flagAbovePeak(b, fr[n/2])
}
