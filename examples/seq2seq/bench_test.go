package main

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkStep is one whole training step (zero the gradients, forward,
// backward, Adam) of bench/torch/seq2seq.py's model at its default shapes —
// E = H = 256, 16 pairs of 24 tokens — with a vocabulary of 8000 and 32000,
// under each score; the phases' times are reported beside (fwd-ms, bwd-ms,
// optim-ms). bench/torch/seq2seq.py runs the same steps in PyTorch:
//
//	GOMAXPROCS=1 go test -run '^$' -bench 'BenchmarkStep$' -benchtime 10x ./examples/seq2seq
//	/usr/bin/python3 bench/torch/seq2seq.py --vocab 8000,32000 --score dot,general,additive
func BenchmarkStep(b *testing.B) {
	for _, V := range []int{8000, 32000} {
		for _, score := range []string{"dot", "general", "additive"} {
			c := Config{V: V, E: 256, H: 256, B: 16, Ts: 24, Tt: 24, Score: score}
			b.Run(fmt.Sprintf("V=%d/score=%s", V, score), func(b *testing.B) {
				md := NewModel(c, 1)
				d := randomBatch(c, rand.New(rand.NewPCG(1, 2)))
				md.Step(d)
				var fwd, bwd, opt time.Duration
				b.ResetTimer()
				for b.Loop() {
					t0 := time.Now()
					md.ZeroGrad()
					md.Forward(d)
					t1 := time.Now()
					md.Backward(d)
					t2 := time.Now()
					md.Update()
					t3 := time.Now()
					fwd, bwd, opt = fwd+t1.Sub(t0), bwd+t2.Sub(t1), opt+t3.Sub(t2)
				}
				n := float64(b.N)
				b.ReportMetric(float64(fwd.Microseconds())/1e3/n, "fwd-ms")
				b.ReportMetric(float64(bwd.Microseconds())/1e3/n, "bwd-ms")
				b.ReportMetric(float64(opt.Microseconds())/1e3/n, "optim-ms")
			})
		}
	}
}
