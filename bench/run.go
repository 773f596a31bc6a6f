package bench

import (
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/heedml/heed/kernels"
)

// Result is one implementation measured on one case.
type Result struct {
	Case  *Case
	Impl  *Impl
	Ns    float64 // median time per call
	Rate  float64 // in Unit
	Frac  float64 // of the roofline
	Bound string  // which ceiling bounds it: "BW L1", ..., "FMA"
}

// Unit is the throughput unit the report gives kernel k in.
func Unit(k Kernel) string {
	switch k {
	case Dot, MatVec, MatTVec, StepDot, StepScaled, StepGeneral, StepBatch, StepMemory, DecodeF32, DecodeBF16, DecodeF16, DecodeQ8, DecodeQ8Q8:
		return "GB/s"
	case MatVecBatch, MultiHead:
		return "GFLOP/s"
	}
	return "Gelem/s"
}

func rate(c *Case, ns float64) float64 {
	switch Unit(c.Kernel) {
	case "GB/s":
		return float64(c.Bytes) / ns
	case "GFLOP/s":
		return float64(c.Flops) / ns
	}
	return float64(c.Elems) / ns
}

// Options choose what Run measures.
type Options struct {
	Full    bool          // every size, not the report's subset
	Kernels []Kernel      // nil: all
	Round   time.Duration // length of one timing round
	Rounds  int           // rounds per measurement (the median is kept)
	// Progress, if not nil, receives a progress line per measurement.
	Progress io.Writer
}

// Run measures every implementation on every case. The implementations of
// one case are measured together, round-robin (MeasureAll), so their ratios
// hold even when the machine is busy; ceil gives the fractions.
func Run(o Options, ceil Ceilings) []Result {
	ks := o.Kernels
	if ks == nil {
		ks = Kernels
	}
	type job struct {
		k   Kernel
		n   int
		ims []*Impl
	}
	var jobs []job
	total := 0
	for _, k := range ks {
		for _, n := range Sizes(k, o.Full) {
			j := job{k: k, n: n}
			for _, im := range Impls() {
				if im.Has(k) && !(im.Parallel && n < 256) {
					j.ims = append(j.ims, im)
				}
			}
			jobs, total = append(jobs, j), total+len(j.ims)
		}
	}
	var res []Result
	start := time.Now()
	for i, j := range jobs {
		c := NewCase(j.k, j.n) // inputs live only while measured
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "\r\033[K[%3d/%d cases, %3.0fs] %v %s: %d implementations", i+1, len(jobs), time.Since(start).Seconds(), c.Kernel, c.Label, len(j.ims))
		}
		runs, cpu := make([]func(int), len(j.ims)), make([]bool, len(j.ims))
		for k, im := range j.ims {
			runs[k], cpu[k] = c.Bind(im), im.Threads <= 1
		}
		for k, ns := range MeasureAll(runs, cpu, o.Round, o.Rounds) {
			f, b := ceil.Fraction(c, ns)
			res = append(res, Result{Case: c, Impl: j.ims[k], Ns: ns, Rate: rate(c, ns), Frac: f, Bound: b})
		}
		c.release()
	}
	kernelsUseDefault()
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "\r\033[K%d measurements of %d cases in %.0fs\n", total, len(jobs), time.Since(start).Seconds())
	}
	return res
}

// kernelsUseDefault restores heed's default ISA and AVX-512 width and the
// GOMAXPROCS the process started with.
func kernelsUseDefault() {
	kernels.Use(defaultISA)
	if defaultWidth != 0 {
		kernels.UseAVX512Width(0)
	}
	runtime.GOMAXPROCS(defaultProcs)
}

var defaultProcs = runtime.GOMAXPROCS(0)

// Refraction recomputes every result's fraction against ceil.
func Refraction(rs []Result, ceil Ceilings) {
	for i := range rs {
		rs[i].Frac, rs[i].Bound = ceil.Fraction(rs[i].Case, rs[i].Ns)
	}
}
