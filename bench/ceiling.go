package bench

import (
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heedml/heed/kernels"
)

// Level is one read-only streaming bandwidth measurement.
type Level struct {
	Name  string  // L1, L2, L3, memory
	Limit int64   // working sets up to this many bytes are bounded by it
	Bytes int64   // buffer size measured
	GBs   float64 // bytes per nanosecond
}

// Ceilings are the machine limits measured in this process.
type Ceilings struct {
	Loops  string  // which loops measured them
	Levels []Level // L1 first
	// GFlops is the FMA peak of one core: the fastest of the FMA probe's
	// variants (register width × independent accumulators, multiplicands
	// in registers), named by FMA. Every "fraction of the FMA ceiling" is
	// of it, and no kernel may exceed 1.0 of it: one that does means the
	// probe missed the peak (AbovePeak lists them).
	GFlops float64
	FMA    string    // the variant that reached GFlops, as "zmm×24"
	FMAs   []FMARate // every variant measured, in the probe's order
}

// FMARate is one FMA probe variant's best rate.
type FMARate struct {
	Name   string
	GFlops float64
}

// fmaLoop is one variant of the FMA probe: run(iters, a) performs iters
// iterations of flops floating-point operations each.
type fmaLoop struct {
	name  string
	run   func(iters int, a float32) float32
	flops int
}

// cacheSizes returns the data-cache sizes of CPU 0 from Linux sysfs (L1d, L2,
// L3), or typical values where they cannot be read.
func cacheSizes() []int64 {
	sizes := []int64{32 << 10, 1 << 20, 32 << 20}
	for i := 0; i < 8; i++ {
		dir := fmt.Sprintf("/sys/devices/system/cpu/cpu0/cache/index%d/", i)
		lvl, err1 := os.ReadFile(dir + "level")
		typ, err2 := os.ReadFile(dir + "type")
		sz, err3 := os.ReadFile(dir + "size")
		if err1 != nil || err2 != nil || err3 != nil || strings.TrimSpace(string(typ)) == "Instruction" {
			continue
		}
		l, _ := strconv.Atoi(strings.TrimSpace(string(lvl)))
		s := strings.TrimSpace(string(sz))
		mult := int64(1)
		switch {
		case strings.HasSuffix(s, "K"):
			mult, s = 1<<10, strings.TrimSuffix(s, "K")
		case strings.HasSuffix(s, "M"):
			mult, s = 1<<20, strings.TrimSuffix(s, "M")
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err == nil && l >= 1 && l <= 3 {
			sizes[l-1] = v * mult
		}
	}
	return sizes
}

// MeasureCeilings measures read-only streaming bandwidth for each cache level
// and memory, and the FMA peak of one core (the fastest FMA probe variant),
// each the best of 2×rounds rounds (a ceiling is an upper bound;
// interference only lowers it).
func MeasureCeilings(round time.Duration, rounds int) Ceilings {
	name, streams, block, fmas := ceilingLoops()
	caches := cacheSizes()
	c := Ceilings{Loops: name}
	// Per level, the best of a few buffer sizes that fit it (for memory,
	// 4× and 8× L3).
	cands := [][]int64{
		{caches[0] / 4, caches[0] / 2},
		{caches[1] / 4, caches[1] / 2},
		{caches[2] / 8, caches[2] / 4, caches[2] / 2},
		{4 * caches[2], 8 * caches[2]},
	}
	limits := []int64{caches[0], caches[1], caches[2], 1 << 62}
	for i, nm := range []string{"L1", "L2", "L3", "memory"} {
		c.Levels = append(c.Levels, measureLevel(Level{Name: nm, Limit: limits[i]}, cands[i], streams, block, round, 2*rounds))
	}
	c.FMAs = measureFMA(fmas, round, 2*rounds)
	c.FMA, c.GFlops = peak(c.FMAs)
	return c
}

// MeasureMemory returns the streaming bandwidth from memory alone, in bytes
// per nanosecond as Level.GBs: MeasureCeilings's memory level over a buffer
// four times the L3, every streaming loop the best of rounds rounds of about
// round each. Rows that compare
// themselves with the memory's bandwidth take it just before and after
// their timing, so that their fraction is of the speed the shared machine
// had then.
func MeasureMemory(round time.Duration, rounds int) float64 {
	_, streams, block, _ := ceilingLoops()
	l := measureLevel(Level{Name: "memory", Limit: 1 << 62}, []int64{4 * cacheSizes()[2]}, streams, block, round, rounds)
	return l.GBs
}

// measureLevel returns top with the best bandwidth of every streaming loop
// over buffers of each of the sizes (bytes, rounded down to whole blocks),
// each the best of rounds rounds of about round, and the size that gave it.
func measureLevel(top Level, sizes []int64, streams []func([]float32) float32, block int, round time.Duration, rounds int) Level {
	for _, bytes := range sizes {
		n := max(block, int(bytes/4)/block*block)
		buf := make([]float32, n)
		for j := range buf {
			buf[j] = 1
		}
		for _, stream := range streams {
			ns := best(func(iters int) {
				var s float32
				for range iters {
					s += stream(buf)
				}
				sink = s
			}, round, rounds)
			if gbs := float64(4*n) / ns; gbs > top.GBs {
				top.Bytes, top.GBs = int64(4*n), gbs
			}
		}
	}
	return top
}

// measureFMA returns the best rate of each FMA loop over rounds rounds of
// about round each, the loops interleaved round by round so that a busy
// spell of the machine falls on all of them; timed by the process's CPU
// time.
func measureFMA(loops []fmaLoop, round time.Duration, rounds int) []FMARate {
	runs := make([]func(int), len(loops))
	iters := make([]int, len(loops))
	ns := make([]float64, len(loops))
	for i, l := range loops {
		runs[i] = func(n int) { sink = l.run(n*1000, 1) }
		iters[i] = calibrate(runs[i], round, true)
		ns[i] = math.Inf(1)
	}
	for range rounds {
		for i, r := range runs {
			ns[i] = min(ns[i], timeRound(r, iters[i], true))
		}
	}
	out := make([]FMARate, len(loops))
	for i, l := range loops {
		out[i] = FMARate{l.name, float64(1000*l.flops) / ns[i]}
	}
	return out
}

// peak returns the fastest of rs.
func peak(rs []FMARate) (name string, gflops float64) {
	for _, r := range rs {
		if r.GFlops > gflops {
			name, gflops = r.Name, r.GFlops
		}
	}
	return name, gflops
}

// genericLoops uses heed's Sum as the streaming loop and a Go loop with eight
// independent multiply-adds as the FMA loop.
func genericLoops() (string, []func([]float32) float32, int, []fmaLoop) {
	return "heed kernels.Sum (" + kernels.Active().String() + ") and a Go loop", []func([]float32) float32{kernels.Sum}, 1, []fmaLoop{{"Go×8", goFMA, 16}}
}

func goFMA(iters int, a float32) float32 {
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	for range iters {
		s0 = s0*a + a
		s1 = s1*a + a
		s2 = s2*a + a
		s3 = s3*a + a
		s4 = s4*a + a
		s5 = s5*a + a
		s6 = s6*a + a
		s7 = s7*a + a
	}
	return s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7
}

// Level returns the level that bounds a working set of the given size.
func (c Ceilings) Level(bytes int64) Level {
	for _, l := range c.Levels {
		if bytes <= l.Limit {
			return l
		}
	}
	return c.Levels[len(c.Levels)-1]
}

// Fraction returns how close a call of case cs taking ns nanoseconds comes to
// the ceiling that bounds it, and names that ceiling. For Dot and the matrix
// kernels it is the roofline: the larger of the bandwidth over the streaming
// ceiling of the level the working set fits in and the flop rate over the FMA
// ceiling (the FMA peak, c.GFlops). Exp, Tanh and AdditiveScore are bounded by instruction throughput:
// their fraction is elements per FMA slot (Flops counts one FMA per element),
// so 1/fraction is the cost of an element in FMA slots. Softmax takes the
// larger of that and its bandwidth fraction.
func (c Ceilings) Fraction(cs *Case, ns float64) (float64, string) {
	fp := cs.Footprint
	if fp == 0 {
		fp = cs.Bytes
	}
	l := c.Level(fp)
	bw := float64(cs.Bytes) / ns / l.GBs
	fl := float64(cs.Flops) / ns / c.GFlops
	switch cs.Kernel {
	case Exp, Tanh, Additive, StepAdditive:
		return fl, "FMA slot"
	case Softmax:
		if fl >= bw {
			return fl, "FMA slot"
		}
	}
	if bw >= fl {
		return bw, "BW " + l.Name
	}
	return fl, "FMA"
}

// AbovePeak returns the results bounded by the FMA peak (bound "FMA" or
// "FMA slot") whose fraction of it exceeds 1: none may, so each one means
// the probe did not reach the peak on this CPU (or the machine changed
// speed between the two).
func AbovePeak(rs []Result) []Result {
	var out []Result
	for _, r := range rs {
		if strings.HasPrefix(r.Bound, "FMA") && r.Frac > 1 {
			out = append(out, r)
		}
	}
	return out
}

// WriteFMAPeak writes the FMA peak under the ceilings table: the variant
// that reached it, every variant's rate, the rule that no kernel exceeds 1.0
// of it, and the results that did.
func WriteFMAPeak(w io.Writer, c Ceilings, rs []Result) {
	fmt.Fprintf(w, "The FMA peak is the fastest of %d FMA probe variants (register width × independent accumulators, multiplicands in registers): **%s**.", len(c.FMAs), c.FMA)
	if len(c.FMAs) > 1 {
		fmt.Fprintf(w, " All, GFLOP/s:")
		for i, f := range c.FMAs {
			sep := ","
			if i == 0 {
				sep = ""
			}
			fmt.Fprintf(w, "%s %s %.1f", sep, f.Name, f.GFlops)
		}
		fmt.Fprintf(w, ".")
	}
	fmt.Fprintf(w, " Every fraction of the FMA ceiling below is of this peak, and none may exceed 1.0.\n\n")
	if over := AbovePeak(rs); len(over) > 0 {
		fmt.Fprintf(w, "**Above the FMA peak (fraction > 1.0: the probe missed the peak here, or the clock changed between the two):**")
		for _, r := range over {
			fmt.Fprintf(w, " %v %s %s %.2f;", r.Case.Kernel, r.Case.Label, r.Impl.Name, r.Frac)
		}
		fmt.Fprintf(w, "\n\n")
	}
}

// Max returns the larger of c and d level by level, and the faster of their
// FMA peaks with its variant (and each variant's better rate): the report
// measures the ceilings before and after the kernels and keeps the best.
func (c Ceilings) Max(d Ceilings) Ceilings {
	out := c
	out.Levels = slices.Clone(c.Levels)
	for i := range out.Levels {
		if i < len(d.Levels) && d.Levels[i].GBs > out.Levels[i].GBs {
			out.Levels[i] = d.Levels[i]
		}
	}
	out.FMAs = slices.Clone(c.FMAs)
	for i := range out.FMAs {
		if i < len(d.FMAs) && d.FMAs[i].Name == out.FMAs[i].Name {
			out.FMAs[i].GFlops = max(out.FMAs[i].GFlops, d.FMAs[i].GFlops)
		}
	}
	if d.GFlops > c.GFlops {
		out.GFlops, out.FMA = d.GFlops, d.FMA
	}
	return out
}
