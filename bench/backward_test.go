//go:build amd64 && !purego

package bench

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/heedml/heed/kernels"
)

// BenchmarkBackward times the backward rows (backward.go) under each ISA,
// single-threaded: run it with GOMAXPROCS=1. Each row's fwd (the training
// forward) and bwd (the backward alone, after one forward) report GFLOP/s of
// process CPU time over their own FLOPs (PrefillShape.Flops and
// BackwardFlops, ManyShape's likewise) and that as a fraction of the FMA
// ceiling of the widest ISA ("of-ceiling") and of AVX2 ("of-avx2-ceiling").
//
//	cd bench && GOMAXPROCS=1 go test -run '^$' -bench '^BenchmarkBackward$' .
func BenchmarkBackward(b *testing.B) {
	c512, c256 := gemmCeilings()
	prev := kernels.Active()
	defer kernels.Use(prev)
	run := func(b *testing.B, f func(), flops float64) { reportCeilingRate(b, f, flops, c512, c256) }
	type row struct {
		name              string
		fwd, bwd          func()
		fwdFlops, bwdFlop float64
	}
	var rows []func() row
	for _, s := range PrefillShapes {
		rows = append(rows, func() row {
			p := NewPrefillTrain(rand.New(rand.NewPCG(1, 2)), s)
			return row{"MultiHead/" + s.String(), p.Forward, p.Backward, s.Flops(), s.BackwardFlops()}
		})
	}
	for _, s := range ManyShapes {
		rows = append(rows, func() row {
			t := NewManyTrain(rand.New(rand.NewPCG(1, 2)), s)
			return row{"AttendMany/" + s.String(), t.Forward, t.Backward, s.Flops(), s.BackwardFlops()}
		})
	}
	for _, mk := range rows {
		r := mk() // inputs live only while their row is timed
		for _, isa := range kernels.Supported() {
			if isa == kernels.Generic {
				continue
			}
			b.Run(r.name+"/heed-"+isa.String()+"/fwd", func(b *testing.B) {
				kernels.Use(isa)
				run(b, r.fwd, r.fwdFlops)
			})
			b.Run(r.name+"/heed-"+isa.String()+"/bwd", func(b *testing.B) {
				kernels.Use(isa)
				r.fwd()
				run(b, r.bwd, r.bwdFlop)
			})
		}
		kernels.Use(prev)
	}
}

// TestBackwardRows runs every backward row at a small shape under each ISA
// and checks that the gradients it times are the ones heed computes: finite,
// not all zero, and the same on every ISA within 1e-3 relative to the
// largest (attention's tests bound them against float64 oracles).
func TestBackwardRows(t *testing.T) {
	prev := kernels.Active()
	defer kernels.Use(prev)
	type gradCase struct {
		name string
		run  func() []float32 // the gradients of one forward and backward
	}
	var cases []gradCase
	for _, s := range []PrefillShape{{40, 16, 1, 1}, {33, 8, 4, 4}, {29, 8, 6, 2}} {
		cases = append(cases, gradCase{s.String(), func() []float32 {
			p := NewPrefillTrain(rand.New(rand.NewPCG(3, 4)), s)
			p.Forward()
			p.Backward()
			return append(append(append([]float32(nil), p.DQ.Data...), p.DK.Data...), p.DV.Data...)
		}})
	}
	for _, s := range []ManyShape{{false, 3, 5, 7, 16}, {true, 3, 5, 7, 16}} {
		cases = append(cases, gradCase{s.String(), func() []float32 {
			m := NewManyTrain(rand.New(rand.NewPCG(3, 4)), s)
			m.Forward()
			m.Backward()
			g := append(append([]float32(nil), m.DQ.Data...), m.Grads.Keys.Data...)
			return append(append(append(g, m.Grads.W1.Data...), m.Grads.W2.Data...), m.Grads.V...)
		}})
	}
	for _, c := range cases {
		var ref []float32
		for _, isa := range kernels.Supported() {
			kernels.Use(isa)
			g := c.run()
			var big float64
			for i, x := range g {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Fatalf("%s %v: gradient[%d] = %v", c.name, isa, i, x)
				}
				big = math.Max(big, math.Abs(float64(x)))
			}
			if big == 0 {
				t.Fatalf("%s %v: every gradient is zero", c.name, isa)
			}
			if ref == nil {
				ref = g
				continue
			}
			for i := range g {
				if d := math.Abs(float64(g[i] - ref[i])); d > 1e-3*big {
					t.Fatalf("%s %v: gradient[%d] = %v, %v under %v", c.name, isa, i, g[i], ref[i], kernels.Supported()[0])
				}
			}
		}
	}
}
