package bench

import (
	"strings"
	"testing"
)

// The ceiling loops must read every element: their sum of ones is the
// length. Each FMA loop returns a positive sum and does its flops.
func TestCeilingLoops(t *testing.T) {
	_, streams, block, fmas := ceilingLoops()
	for _, blocks := range []int{0, 1, 3, 64} {
		n := blocks * block
		buf := make([]float32, n)
		for i := range buf {
			buf[i] = 1
		}
		for i, stream := range streams {
			if got := stream(buf); got != float32(n) {
				t.Errorf("stream %d of %d ones = %v", i, n, got)
			}
		}
	}
	if len(fmas) == 0 {
		t.Fatal("no FMA loop")
	}
	for _, f := range fmas {
		if got := f.run(10, 1); got <= 0 || f.flops <= 0 {
			t.Errorf("%s: run(10, 1) = %v, %d flops per iteration", f.name, got, f.flops)
		}
	}
}

// The peak is the fastest variant, Max keeps the faster peak with its name,
// and the report flags a fraction of the FMA peak above 1.
func TestFMAPeak(t *testing.T) {
	c := Ceilings{FMAs: []FMARate{{"ymm×8", 50}, {"zmm×12", 90}, {"zmm×24", 100}}}
	c.FMA, c.GFlops = peak(c.FMAs)
	if c.FMA != "zmm×24" || c.GFlops != 100 {
		t.Errorf("peak = %s %v", c.FMA, c.GFlops)
	}
	d := Ceilings{FMA: "zmm×12", GFlops: 110, FMAs: []FMARate{{"ymm×8", 60}, {"zmm×12", 110}, {"zmm×24", 95}}}
	m := c.Max(d)
	if m.FMA != "zmm×12" || m.GFlops != 110 || m.FMAs[0].GFlops != 60 || m.FMAs[2].GFlops != 100 {
		t.Errorf("Max = %s %v %v", m.FMA, m.GFlops, m.FMAs)
	}
	if m := d.Max(c); m.FMA != "zmm×12" || m.GFlops != 110 {
		t.Errorf("Max the other way = %s %v", m.FMA, m.GFlops)
	}

	im := &Impl{Name: "x"}
	cs := &Case{Kernel: MatVecBatch, Label: "n"}
	rs := []Result{
		{Case: cs, Impl: im, Frac: 1.07, Bound: "FMA"},
		{Case: cs, Impl: im, Frac: 0.9, Bound: "FMA"},
		{Case: cs, Impl: im, Frac: 1.2, Bound: "BW L1"},
		{Case: cs, Impl: im, Frac: 1.01, Bound: "FMA slot"},
	}
	if got := AbovePeak(rs); len(got) != 2 || got[0].Frac != 1.07 || got[1].Frac != 1.01 {
		t.Errorf("AbovePeak = %+v", got)
	}
	var b strings.Builder
	WriteFMAPeak(&b, m, rs)
	for _, want := range []string{"**zmm×12**", "ymm×8 60.0", "none may exceed 1.0", "Above the FMA peak", "1.07"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("WriteFMAPeak: no %q in\n%s", want, b.String())
		}
	}
	b.Reset()
	WriteFMAPeak(&b, m, rs[1:3])
	if strings.Contains(b.String(), "Above the FMA peak") {
		t.Errorf("WriteFMAPeak flags nothing above 1.0 of the peak:\n%s", b.String())
	}
}
