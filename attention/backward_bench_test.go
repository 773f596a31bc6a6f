package attention

import (
	"fmt"
	"math"
	"testing"

	"github.com/heedml/heed/kernels"
)

// causalPairs returns Σ_t seen(t), the (query, key) pairs a causal call of T
// queries against S keys computes (T·S when not causal).
func causalPairs(T, S int, causal bool) float64 {
	if !causal {
		return float64(T) * float64(S)
	}
	var n float64
	for t := range T {
		n += float64(min(S, max(0, t+S-T+1)))
	}
	return n
}

// BenchmarkMultiHeadBackward is a causal self-attention training step of
// MultiHead or GroupedQuery: the training forward (fwd), the backward (bwd)
// and both, at T = S = 512 with d_k = d_h = 64 and T = S = 2048 with 128, for
// 1 and 8 heads and 8 heads over 2 KV heads, on one goroutine (GFLOP/s of
// thread CPU time) or spread over GOMAXPROCS (wall-GFLOP/s of wall time, and
// proc-cpu-ns/op the CPU time of all the process's threads: its excess over
// one goroutine's cpu-ns/op is what the split adds). The GFLOP/s count
// 2 flops per multiply-add of the products over the pairs the causal mask
// keeps: the forward's (d_k + d_h) per pair and head, the backward's
// (3·d_k + 2·d_h) — 2.5 times the forward's at d_k = d_h.
//
//	go test -run '^$' -bench '^BenchmarkMultiHeadBackward$' ./attention
func BenchmarkMultiHeadBackward(b *testing.B) {
	for _, c := range []struct{ T, dk, heads, kv int }{
		{512, 64, 1, 1}, {512, 64, 8, 8}, {512, 64, 8, 2},
		{2048, 128, 1, 1}, {2048, 128, 8, 8}, {2048, 128, 8, 2},
	} {
		T, dk, heads, kv := c.T, c.dk, c.heads, c.kv
		q, k, v := rampMat(T, heads*dk), rampMat(T, kv*dk), rampMat(T, kv*dk)
		out, dout, lse := rampMat(T, heads*dk), rampMat(T, heads*dk), make([]float32, heads*T)
		dq, dkm, dv := rampMat(T, heads*dk), rampMat(T, kv*dk), rampMat(T, kv*dk)
		pairs := causalPairs(T, T, true) * float64(heads)
		fwd, bwd := 2*pairs*float64(2*dk), 2*pairs*float64(5*dk)
		var ws Workspace
		for _, par := range []bool{false, true} {
			name := fmt.Sprintf("T=S=%d,dk=%d,h=%d,kv=%d/parallel=%v,procs=%d", T, dk, heads, kv, par, procs())
			b.Run(name, func(b *testing.B) {
				if !par {
					setTuning(b, func(t *tuning) { t.multiHeadMinWork, t.multiHeadBackMin = math.MaxInt, math.MaxInt })
				}
				benchISAs(b, func(b *testing.B) {
					fw := func() { GroupedQueryTrain(out, lse, q, k, v, heads, kv, Causal, &ws) }
					bw := func() { GroupedQueryBackward(dq, dkm, dv, dout, out, lse, q, k, v, heads, kv, Causal, &ws) }
					fw()
					for _, s := range []struct {
						name  string
						f     func()
						flops float64
					}{{"fwd", fw, fwd}, {"bwd", bw, bwd}, {"fwd+bwd", func() { fw(); bw() }, fwd + bwd}} {
						b.Run(s.name, func(b *testing.B) {
							s.f()
							p0 := processCPU()
							c0 := startCPU(b)
							for b.Loop() {
								s.f()
							}
							if par {
								b.ReportMetric(s.flops/(float64(b.Elapsed().Nanoseconds())/float64(b.N)), "wall-GFLOP/s")
								if p1 := processCPU(); p0 >= 0 && p1 >= 0 {
									b.ReportMetric(float64(p1-p0)/float64(b.N), "proc-cpu-ns/op")
								}
							}
							c0.stop(s.flops)
						})
					}
				})
			})
		}
	}
}

// BenchmarkAttendManyBackward is a teacher-forced training step of Luong
// dot and Bahdanau attention: 16 sequences, each 32 decoder states against
// 64 encoder states, d = d_a = 256 (the encoder states are the keys and the
// values). fwd is, per sequence, Reset (Bahdanau's K = H̄W₂ᵀ) and
// AttendMany; bwd is Reset and AttendManyBackward into every gradient (the
// queries, the keys, W₁, W₂ and v); fwd+bwd is Reset, AttendMany and
// AttendManyBackward. GFLOP/s count the products'
// multiply-adds (2 flops each): dot fwd 2·B·S·d, bwd 4·B·S·d; Bahdanau fwd
// S·d·d_a + B·d·d_a + B·S·d (K, W₁h, the context; the tanh pass is not
// counted), bwd 2·B·S·d + 2·B·d·d_a + 2·S·d·d_a (the weights' gradient and
// dV, dh and dW₁, dW₂ and dH̄; the fused pass's 3·B·S·d_a not counted).
//
//	go test -run '^$' -bench '^BenchmarkAttendManyBackward$' ./attention
func BenchmarkAttendManyBackward(b *testing.B) {
	const seqs, B, S, d = 16, 32, 64, 256
	keys := make([]kernels.Matrix, seqs)
	queries := make([]kernels.Matrix, seqs)
	for i := range seqs {
		keys[i], queries[i] = rampMat(S, d), rampMat(B, d)
	}
	w, c, dc, dq := rampMat(B, S), rampMat(B, d), rampMat(B, d), rampMat(B, d)
	w1, w2, v := rampMat(d, d), rampMat(d, d), ramp(d)
	g := Grads{Keys: rampMat(S, d)}
	for _, sc := range []Scorer{Dot(), Additive(w1, w2, v)} {
		fwd, bwd := 2.0*seqs*(2*B*S*d), 2.0*seqs*(4*B*S*d)
		gr := g
		if sc.kind == kindAdditive {
			fwd = 2.0 * seqs * (S*d*d + B*d*d + B*S*d)
			bwd = 2.0 * seqs * (2*B*S*d + 2*B*d*d + 2*S*d*d)
			gr.W1, gr.W2, gr.V = rampMat(d, d), rampMat(d, d), ramp(d)
		}
		m := NewMemory(sc, keys[0], keys[0])
		// Each sequence's step: its weights and contexts are the same
		// buffers (their values do not change the work).
		fw := func(i int) {
			m.Reset(keys[i], keys[i])
			m.AttendMany(w, c, queries[i])
		}
		bw := func(i int) {
			m.AttendManyBackward(&gr, dq, kernels.Matrix{}, dc, w, queries[i])
		}
		b.Run(fmt.Sprintf("%s/seqs=%d,B=%d,S=%d,d=%d", sc, seqs, B, S, d), func(b *testing.B) {
			benchISAs(b, func(b *testing.B) {
				for _, s := range []struct {
					name  string
					f     func()
					flops float64
				}{
					{"fwd", func() {
						for i := range seqs {
							fw(i)
						}
					}, fwd},
					{"bwd", func() {
						for i := range seqs {
							m.Reset(keys[i], keys[i])
							bw(i)
						}
					}, bwd},
					{"fwd+bwd", func() {
						for i := range seqs {
							fw(i)
							bw(i)
						}
					}, fwd + bwd},
				} {
					b.Run(s.name, func(b *testing.B) {
						s.f()
						c0 := startCPU(b)
						for b.Loop() {
							s.f()
						}
						c0.stop(s.flops)
					})
				}
			})
		})
	}
}

// BenchmarkMultiHeadBackwardTiles sweeps the blocks of the MultiHead
// backward (queries per tile × keys per block, and the keys per product on
// the diagonal) on one causal head, on one goroutine; cpu-GFLOP/s count the
// backward's causal FLOPs over the process's CPU time (BACKWARD.md records
// the choice).
//
//	GOMAXPROCS=1 go test -run '^$' -bench 'MultiHeadBackwardTiles/.*/.*/avx512' -benchtime 10x -count 3 ./attention
func BenchmarkMultiHeadBackwardTiles(b *testing.B) {
	for _, c := range []struct{ T, dk int }{{512, 64}, {2048, 128}} {
		q, k, v := rampMat(c.T, c.dk), rampMat(c.T, c.dk), rampMat(c.T, c.dk)
		out, dout, lse := rampMat(c.T, c.dk), rampMat(c.T, c.dk), make([]float32, c.T)
		dq, dk, dv := rampMat(c.T, c.dk), rampMat(c.T, c.dk), rampMat(c.T, c.dk)
		flops := 2 * causalPairs(c.T, c.T, true) * float64(5*c.dk)
		var ws Workspace
		MultiHeadTrain(out, lse, q, k, v, 1, Causal, &ws)
		for _, t := range [][3]int{{64, 64, 16}, {128, 128, 32}, {128, 256, 32}, {192, 128, 48}, {256, 128, 32}, {256, 256, 64}} {
			b.Run(fmt.Sprintf("T=S=%d,dk=%d/rows=%d,keys=%d,diag=%d", c.T, c.dk, t[0], t[1], t[2]), func(b *testing.B) {
				setBackTiles(b, t[0], t[1], t[2])
				benchISAs(b, func(b *testing.B) {
					MultiHeadBackward(dq, dk, dv, dout, out, lse, q, k, v, 1, Causal, &ws)
					b.ResetTimer()
					c0 := processCPU()
					for range b.N {
						MultiHeadBackward(dq, dk, dv, dout, out, lse, q, k, v, 1, Causal, &ws)
					}
					if c1 := processCPU(); c0 >= 0 && c1 > c0 {
						b.ReportMetric(flops*float64(b.N)/float64(c1-c0), "cpu-GFLOP/s")
					}
				})
			})
		}
	}
}
