package attention

import (
	"fmt"
	"math"
	"testing"

	"github.com/heedml/heed/kernels"
)

// Benchmarks run under every supported ISA, beside plain Go loops, so ratios
// come from one run: go test -run '^$' -bench . ./attention

func benchISAs(b *testing.B, f func(b *testing.B)) {
	prev := kernels.Active()
	defer kernels.Use(prev)
	for _, isa := range kernels.Supported() {
		kernels.Use(isa)
		b.Run(isa.String(), f)
	}
}

func ramp(n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(i%17)/17 - 0.5
	}
	return s
}

func rampMat(r, c int) kernels.Matrix {
	return kernels.Matrix{Rows: r, Cols: c, Stride: c, Data: ramp(r * c)}
}

// BenchmarkStep is one step of each mechanism at S=128, d=64.
func BenchmarkStep(b *testing.B) {
	const S, d = 128, 64
	keys := rampMat(S, d)
	for _, sc := range []Scorer{Dot(), ScaledDot(), Cosine(), General(rampMat(d, d)), Additive(rampMat(d, d), rampMat(d, d), ramp(d))} {
		m := NewMemory(sc, keys, keys)
		w, c, h := make([]float32, S), make([]float32, d), ramp(d)
		b.Run(fmt.Sprintf("%s/S=%d,d=%d", sc, S, d), func(b *testing.B) {
			benchISAs(b, func(b *testing.B) {
				for b.Loop() {
					m.Attend(w, c, h)
				}
			})
		})
	}
}

// bahdanauLoop is the plain Go Bahdanau step with K = H̄W₂ᵀ cached: q = W₁h,
// score_s = Σᵢ vᵢ·tanh(qᵢ + K_si) with math.Tanh, a math.Exp softmax, c = Σ α_s·h̄_s.
func bahdanauLoop(w, c, q, h []float32, w1, k, vals kernels.Matrix, v []float32) {
	for i := range q {
		var s float32
		for j, x := range h {
			s += w1.Data[i*w1.Stride+j] * x
		}
		q[i] = s
	}
	mx := math.Inf(-1)
	for s := range w {
		var acc float64
		for i, qi := range q {
			acc += float64(v[i]) * math.Tanh(float64(qi+k.Data[s*k.Stride+i]))
		}
		w[s] = float32(acc)
		mx = max(mx, acc)
	}
	var sum float64
	for s := range w {
		e := math.Exp(float64(w[s]) - mx)
		w[s] = float32(e)
		sum += e
	}
	clear(c)
	for s := range w {
		w[s] = float32(float64(w[s]) / sum)
		for j := range c {
			c[j] += w[s] * vals.Data[s*vals.Stride+j]
		}
	}
}

// BenchmarkBahdanau is a Bahdanau step with cached keys at S=64, d=256
// (d_q = d_k = d_a = d_v = 256) against the plain Go loop.
func BenchmarkBahdanau(b *testing.B) {
	const S, d = 64, 256
	keys, w1, w2, v := rampMat(S, d), rampMat(d, d), rampMat(d, d), ramp(d)
	m := NewMemory(Additive(w1, w2, v), keys, keys)
	w, c, h, q := make([]float32, S), make([]float32, d), ramp(d), make([]float32, d)
	b.Run(fmt.Sprintf("S=%d,d=%d/goloop", S, d), func(b *testing.B) {
		for b.Loop() {
			bahdanauLoop(w, c, q, h, w1, m.proj, keys, v)
		}
	})
	b.Run(fmt.Sprintf("S=%d,d=%d", S, d), func(b *testing.B) {
		benchISAs(b, func(b *testing.B) {
			for b.Loop() {
				m.Attend(w, c, h)
			}
		})
	})
}

// BenchmarkMany is 8 queries against S=1024, d=256, Luong dot and Bahdanau:
// one AttendMany call against 8 Attend calls. "many" is a later call of a
// sequence (Vᵀ cached); for Luong dot, "first" is a Reset and the first call
// (teacher forcing). Bahdanau's Reset projects every key, far more work than
// the call.
func BenchmarkMany(b *testing.B) {
	const S, d, B = 1024, 256, 8
	keys := rampMat(S, d)
	for _, sc := range []Scorer{Dot(), Additive(rampMat(d, d), rampMat(d, d), ramp(d))} {
		m := NewMemory(sc, keys, keys)
		w, c, q := rampMat(B, S), rampMat(B, d), rampMat(B, d)
		name := fmt.Sprintf("%s/S=%d,d=%d,B=%d", sc, S, d, B)
		b.Run(name+"/steps", func(b *testing.B) {
			benchISAs(b, func(b *testing.B) {
				for b.Loop() {
					for i := range B {
						m.Attend(row(w, i), row(c, i), row(q, i))
					}
				}
			})
		})
		b.Run(name+"/many", func(b *testing.B) {
			benchISAs(b, func(b *testing.B) {
				m.AttendMany(w, c, q) // the Vᵀ cache
				for b.Loop() {
					m.AttendMany(w, c, q)
				}
			})
		})
		if sc.kind == kindAdditive {
			continue
		}
		b.Run(name+"/first", func(b *testing.B) {
			benchISAs(b, func(b *testing.B) {
				for b.Loop() {
					m.Reset(keys, keys)
					m.AttendMany(w, c, q)
				}
			})
		})
	}
}

// BenchmarkFused is the single-query Luong dot path (Attend: scores written
// into the weights, then one SoftmaxMatTVec) against the three kernels called
// separately with their own buffers, as a user would chain them; the two run
// side by side under each ISA.
func BenchmarkFused(b *testing.B) {
	for _, sz := range [][2]int{{128, 64}, {1024, 256}} {
		S, d := sz[0], sz[1]
		keys := rampMat(S, d)
		m := NewMemory(Dot(), keys, keys)
		scores, w, c, h := make([]float32, S), make([]float32, S), make([]float32, d), ramp(d)
		b.Run(fmt.Sprintf("S=%d,d=%d", S, d), func(b *testing.B) {
			benchISAs(b, func(b *testing.B) {
				b.Run("separate", func(b *testing.B) {
					for b.Loop() {
						kernels.MatVec(scores, keys, h)
						kernels.Softmax(w, scores)
						clear(c)
						kernels.MatTVecAdd(c, keys, w)
					}
				})
				b.Run("fused", func(b *testing.B) {
					for b.Loop() {
						m.Attend(w, c, h)
					}
				})
			})
		})
	}
}

// BenchmarkLong is a single Luong dot query against S=8192 keys of d=256 and
// 512 (8 and 16 MiB), the values being the keys, on one goroutine: read twice
// ("serial": MatVec, then Softmax and MatTVec), in L2-sized parts ("chunks"),
// or in one streaming pass ("stream", the default); and the default split
// across GOMAXPROCS goroutines ("split").
func BenchmarkLong(b *testing.B) {
	for _, d := range []int{256, 512} {
		const S = 8192
		keys := rampMat(S, d)
		m := NewMemory(Dot(), keys, keys)
		w, c, h := make([]float32, S), make([]float32, d), ramp(d)
		for _, mode := range []string{"serial", "chunks", "stream", "split"} {
			b.Run(fmt.Sprintf("S=%d,d=%d/%s", S, d, mode), func(b *testing.B) {
				if mode != "split" {
					setProcs(b, 1)
				}
				setTuning(b, func(t *tuning) {
					if mode == "serial" || mode == "chunks" {
						t.streamMin = math.MaxInt
					}
					if mode == "serial" {
						t.chunkBytes = S * d * 4
					}
				})
				benchISAs(b, func(b *testing.B) {
					for b.Loop() {
						m.Attend(w, c, h)
					}
				})
			})
		}
	}
}

// BenchmarkBatch is one step for each of 32 sequences of lengths 64..1024
// (d=128), on one goroutine or spread over GOMAXPROCS.
func BenchmarkBatch(b *testing.B) {
	const n, d = 32, 128
	mems := make([]*Memory, n)
	ws, cs, qs := make([][]float32, n), make([][]float32, n), make([][]float32, n)
	for i := range mems {
		S := 64 + i*960/(n-1)
		mems[i] = newSelfMemory(Dot(), rampMat(S, d))
		ws[i], cs[i], qs[i] = make([]float32, S), make([]float32, d), ramp(d)
	}
	var bt Batch
	for _, par := range []bool{false, true} {
		b.Run(fmt.Sprintf("n=%d,d=%d/parallel=%v,procs=%d", n, d, par, procs()), func(b *testing.B) {
			if !par {
				setTuning(b, func(t *tuning) { t.batchMinWork = math.MaxInt })
			}
			benchISAs(b, func(b *testing.B) {
				for b.Loop() {
					bt.Attend(mems, ws, cs, qs)
				}
			})
		})
	}
}

// BenchmarkMultiHead is causal self-attention, T=S=128, d=d_v=512, 8 heads,
// with the heads on one goroutine or spread over GOMAXPROCS.
func BenchmarkMultiHead(b *testing.B) {
	const T, d, heads = 128, 512, 8
	q, out := rampMat(T, d), rampMat(T, d)
	var ws Workspace
	for _, par := range []bool{false, true} {
		b.Run(fmt.Sprintf("T=S=%d,d=%d,h=%d/parallel=%v,procs=%d", T, d, heads, par, procs()), func(b *testing.B) {
			if !par {
				setTuning(b, func(t *tuning) { t.multiHeadMinWork = math.MaxInt })
			}
			benchISAs(b, func(b *testing.B) {
				for b.Loop() {
					MultiHead(out, q, q, q, heads, Causal, &ws)
				}
			})
		})
	}
}
