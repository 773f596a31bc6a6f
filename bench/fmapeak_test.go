//go:build amd64 && !purego

package bench

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heedml/heed/kernels"
)

// fmaPeaks are the FMA peaks of one core the GEMM and prefill benchmarks
// divide by: with AVX-512 the fastest of every FMA probe variant (YMM and
// ZMM, bench's FMA ceiling where the CPU has it), with AVX2 the fastest of
// the variants AVX2 runs; each variant the best of 10 rounds of 20 ms, the
// variants interleaved.
type fmaPeaks struct {
	avx512, avx2 FMARate
	loops        []fmaLoop // the variants measured, in roof.FMAs' order
	rates        []FMARate // their rates
}

var gemmPeaks = sync.OnceValue(func() fmaPeaks {
	wide := widestISA() == kernels.AVX512
	loops := fmaLoops(wide)
	rates := measureFMA(loops, 20*time.Millisecond, 10)
	var p fmaPeaks
	p.loops, p.rates = loops, rates
	var avx2 []FMARate
	for i, l := range fmaLoops(false) {
		avx2 = append(avx2, rates[i]) // AVX2's variants come first in roof.FMAs
		if rates[i].Name != l.name {
			panic("bench: the AVX2 FMA variants are not the first of roof.FMAs")
		}
	}
	p.avx2.Name, p.avx2.GFlops = peak(avx2)
	p.avx512 = p.avx2
	if wide {
		p.avx512.Name, p.avx512.GFlops = peak(rates)
	}
	return p
})

// loop returns the variant that reached isa's peak.
func (p fmaPeaks) loop(isa kernels.ISA) fmaLoop {
	name := p.avx2.Name
	if isa == kernels.AVX512 {
		name = p.avx512.Name
	}
	for _, l := range p.loops {
		if l.name == name {
			return l
		}
	}
	panic("bench: no FMA variant " + name)
}

func (p fmaPeaks) String() string {
	return fmt.Sprintf("FMA peak: %.1f GFLOP/s (widest ISA, %s), %.1f (AVX2, %s); no kernel may exceed 1.0 of it", p.avx512.GFlops, p.avx512.Name, p.avx2.GFlops, p.avx2.Name)
}

// flagAbovePeak logs a fraction of the FMA peak above 1.0, which no kernel
// may reach: the probe missed the peak on this CPU, or the clock changed
// between the probe and the kernel. The first benchmark of the process to
// call it also logs the peaks and their variants (a parent benchmark's log
// is shown only with -test.v).
func flagAbovePeak(b *testing.B, frac float64) {
	if frac > 1 {
		b.Logf("ABOVE THE FMA PEAK: %.3f of %s", frac, gemmPeaks())
	} else if !peakLogged.Swap(true) {
		b.Log(gemmPeaks())
	}
}

var peakLogged atomic.Bool

// reportCeilingRate times b.N calls of f (after one untimed call) by the
// process's CPU time and reports GFLOP/s over flops per call and that as a
// fraction of the FMA ceilings c512 (the widest ISA's, "of-ceiling") and
// c256 (AVX2's, "of-avx2-ceiling"), flagging a rate above the peak.
func reportCeilingRate(b *testing.B, f func(), flops, c512, c256 float64) {
	f()
	b.ResetTimer()
	t0, _ := cpuTime()
	for range b.N {
		f()
	}
	t1, _ := cpuTime()
	gf := flops * float64(b.N) / float64(t1-t0)
	b.ReportMetric(gf, "cpu-GFLOP/s")
	b.ReportMetric(gf/c512, "of-ceiling")
	b.ReportMetric(gf/c256, "of-avx2-ceiling")
	flagAbovePeak(b, gf/c512)
}

// AVX2's variants come first in roof.FMAs (gemmPeaks takes AVX2's peak from
// the first rates of the AVX-512 run), and loop finds each peak's variant.
func TestFMAPeaks(t *testing.T) {
	l2, l512 := fmaLoops(false), fmaLoops(true)
	if len(l2) == 0 || len(l512) <= len(l2) {
		t.Fatalf("%d AVX2 and %d AVX-512 FMA variants", len(l2), len(l512))
	}
	for i, l := range l2 {
		if l512[i].name != l.name {
			t.Errorf("AVX-512 variant %d is %s, AVX2's %s", i, l512[i].name, l.name)
		}
	}
	p := fmaPeaks{avx2: FMARate{l2[1].name, 1}, avx512: FMARate{l512[len(l512)-1].name, 2}, loops: l512}
	if got := p.loop(kernels.AVX2); got.name != l2[1].name {
		t.Errorf("loop(AVX2) = %s, want %s", got.name, l2[1].name)
	}
	if got := p.loop(kernels.AVX512); got.name != l512[len(l512)-1].name {
		t.Errorf("loop(AVX512) = %s", got.name)
	}
}

// BenchmarkFMAPeak measures the FMA probe's variants as gemmPeaks does and
// reports the peaks (GFLOP/s of process CPU time) and each variant's rate:
// go test -run '^$' -bench FMAPeak -benchtime 1x ./bench.
func BenchmarkFMAPeak(b *testing.B) {
	var p fmaPeaks
	for b.Loop() {
		p = gemmPeaks()
	}
	var all strings.Builder
	for _, r := range p.rates {
		fmt.Fprintf(&all, " %s %.1f", r.Name, r.GFlops)
	}
	b.Logf("%v\nvariants, GFLOP/s:%s", p, all.String())
	b.ReportMetric(p.avx512.GFlops, "peak-GFLOP/s")
	b.ReportMetric(p.avx2.GFlops, "avx2-peak-GFLOP/s")
}
