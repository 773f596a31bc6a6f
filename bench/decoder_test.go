package bench

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"strconv"
	"testing"

	"github.com/heedml/heed/kernels"
	"github.com/tphakala/simd/f32"
	"github.com/viterin/vek/vek32"
)

// The decoder-step kernels beside their peers, each reporting the process CPU
// time per call (cpu-ns/op) as well as the wall clock, which a busy machine
// inflates:
//
//	go test -run XXX -bench 'Decoder' -count 5 .            (Go peers)
//	go test -tags heedcgo -run XXX -bench 'Decoder' -count 5 .  (and SLEEF)

// timeCPU runs f b.N times and reports the process CPU time per call
// (cpu-ns/op) and the calling thread's (thread-ns/op, the goroutine locked to
// its thread), the better measure of these single-threaded kernels.
func timeCPU(b *testing.B, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0, ok := cpuTime()
	th0, okt := threadCPUTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f()
	}
	b.StopTimer()
	if th1, ok1 := threadCPUTime(); okt && ok1 {
		b.ReportMetric(float64(th1-th0)/float64(b.N), "thread-ns/op")
	}
	if t1, ok1 := cpuTime(); ok && ok1 {
		b.ReportMetric(float64(t1-t0)/float64(b.N), "cpu-ns/op")
	}
}

// withISA runs f with heed's kernels on isa, restoring the default after.
func withISA(isa kernels.ISA, f func()) {
	prev := kernels.Active()
	if kernels.Use(isa) == nil {
		f()
	}
	kernels.Use(prev)
}

func unaryPeers(kernel string, heed func(dst, x []float32)) map[string]func(dst, x []float32) {
	peers := map[string]func(dst, x []float32){}
	for _, isa := range kernels.Supported() {
		if isa == kernels.Generic {
			continue
		}
		peers["heed/"+isa.String()] = func(dst, x []float32) { withISA(isa, func() { heed(dst, x) }) }
	}
	switch kernel {
	case "Sigmoid":
		peers["tphakala"] = f32.Sigmoid
		peers["vek"] = func(dst, x []float32) { // 1/(1+e^−x) on vek32's kernels
			vek32.MulNumber_Into(dst, x, -1)
			vek32.Exp_Inplace(dst)
			vek32.AddNumber_Inplace(dst, 1)
			vek32.Inv_Inplace(dst)
		}
		peers["go-loop"] = func(dst, x []float32) {
			for i, v := range x {
				dst[i] = float32(1 / (1 + math.Exp(-float64(v))))
			}
		}
	case "Log":
		peers["tphakala"] = f32.Log
		peers["vek"] = func(dst, x []float32) { vek32.Log_Into(dst, x) }
		peers["go-loop"] = func(dst, x []float32) {
			for i, v := range x {
				dst[i] = float32(math.Log(float64(v)))
			}
		}
	}
	for name, f := range sleefDecoderPeers[kernel] {
		peers[name] = f
	}
	return peers
}

func benchUnaryPeers(b *testing.B, kernel string, heed func(dst, x []float32), gen func(*rand.Rand) float32) {
	for _, n := range []int{256, 4096, 32768} {
		rng := rand.New(rand.NewPCG(1, 2))
		x, dst := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i] = gen(rng)
		}
		peers := unaryPeers(kernel, heed)
		names := make([]string, 0, len(peers))
		for name := range peers {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			f := peers[name]
			b.Run(name+"/n="+strconv.Itoa(n), func(b *testing.B) {
				b.SetBytes(int64(8 * n))
				timeCPU(b, func() { f(dst, x) })
			})
		}
	}
}

func BenchmarkDecoderSigmoid(b *testing.B) {
	benchUnaryPeers(b, "Sigmoid", kernels.Sigmoid, func(r *rand.Rand) float32 { return float32(r.NormFloat64() * 4) })
}

func BenchmarkDecoderLog(b *testing.B) {
	benchUnaryPeers(b, "Log", kernels.Log, func(r *rand.Rand) float32 { return float32(math.Exp(r.NormFloat64() * 4)) })
}

// BenchmarkDecoderLogSoftmax measures LogSoftmax beside heed's Softmax over a
// vocabulary of 32k logits.
func BenchmarkDecoderLogSoftmax(b *testing.B) {
	n := 32000
	rng := rand.New(rand.NewPCG(3, 4))
	x, dst := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * 4)
	}
	for _, isa := range kernels.Supported() {
		if isa == kernels.Generic {
			continue
		}
		b.Run("Softmax/"+isa.String(), func(b *testing.B) {
			withISA(isa, func() { timeCPU(b, func() { kernels.Softmax(dst, x) }) })
		})
		b.Run("LogSoftmax/"+isa.String(), func(b *testing.B) {
			withISA(isa, func() { timeCPU(b, func() { kernels.LogSoftmax(dst, x) }) })
		})
	}
}

// BenchmarkDecoderTopK measures the top 8 of 32k logits beside one read of
// them (Sum, a streaming read).
func BenchmarkDecoderTopK(b *testing.B) {
	n := 32000
	rng := rand.New(rand.NewPCG(5, 6))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * 4)
	}
	idx, val := make([]int, 8), make([]float32, 8)
	b.Run("TopK8", func(b *testing.B) {
		b.SetBytes(int64(4 * n))
		timeCPU(b, func() { kernels.TopK(idx, val, x) })
	})
	b.Run("Sum", func(b *testing.B) {
		b.SetBytes(int64(4 * n))
		timeCPU(b, func() { kernels.Sum(x) })
	})
}
