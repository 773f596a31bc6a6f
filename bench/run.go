package bench

import (
	"fmt"
	"io"
	"time"
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
	case Dot, MatVec, MatTVec:
		return "GB/s"
	case MatVecBatch:
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

// Run measures every implementation on every case, one at a time.
func Run(o Options, ceil Ceilings) []Result {
	ks := o.Kernels
	if ks == nil {
		ks = Kernels
	}
	type job struct {
		c  *Case
		im *Impl
	}
	var jobs []job
	for _, k := range ks {
		for _, n := range Sizes(k, o.Full) {
			c := NewCase(k, n)
			for _, im := range Impls() {
				if im.Has(k) && !(im.Parallel && n < 256) {
					jobs = append(jobs, job{c, im})
				}
			}
		}
	}
	var res []Result
	start := time.Now()
	for i, j := range jobs {
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "\r\033[K[%3d/%d %3.0fs] %v %s %s", i+1, len(jobs), time.Since(start).Seconds(), j.c.Kernel, j.c.Label, j.im.Name)
		}
		ns := Measure(j.c.Bind(j.im), o.Round, o.Rounds)
		f, b := ceil.Fraction(j.c, ns)
		res = append(res, Result{Case: j.c, Impl: j.im, Ns: ns, Rate: rate(j.c, ns), Frac: f, Bound: b})
	}
	kernelsUseDefault()
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "\r\033[K%d measurements in %.0fs\n", len(jobs), time.Since(start).Seconds())
	}
	return res
}

func kernelsUseDefault() { (&Impl{}).enter() }
