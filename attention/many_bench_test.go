package attention

import (
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkManyLarge is AttendMany with 256 Luong dot queries against S=512
// keys of d=256 (the keys are the values): the first call after Reset and
// later calls. Each call is 2·B·S·d multiply-adds (scores and contexts); the
// GFLOP/s metric counts 4·B·S·d floating-point operations per call of thread
// CPU time.
func BenchmarkManyLarge(b *testing.B) {
	const B, S, d = 256, 512, 256
	keys := rampMat(S, d)
	m := NewMemory(Dot(), keys, keys)
	w, c, q := rampMat(B, S), rampMat(B, d), rampMat(B, d)
	flops := 4.0 * B * S * d
	b.Run(fmt.Sprintf("dot/S=%d,d=%d,B=%d", S, d, B), func(b *testing.B) {
		benchISAs(b, func(b *testing.B) {
			b.Run("first", func(b *testing.B) {
				c0 := startCPU(b)
				for b.Loop() {
					m.Reset(keys, keys)
					m.AttendMany(w, c, q)
				}
				c0.stop(flops)
			})
			b.Run("later", func(b *testing.B) {
				m.AttendMany(w, c, q)
				c0 := startCPU(b)
				for b.Loop() {
					m.AttendMany(w, c, q)
				}
				c0.stop(flops)
			})
		})
	})
}

// cpuClock measures the CPU time of the benchmark's thread, which time slicing
// on a busy machine does not inflate as it does the wall time.
type cpuClock struct {
	b     *testing.B
	start int64
}

func startCPU(b *testing.B) cpuClock {
	runtime.LockOSThread()
	return cpuClock{b, threadCPU()}
}

// stop reports cpu-ns/op and, for flops > 0 floating-point operations per
// call, GFLOP/s of thread CPU time.
func (c cpuClock) stop(flops float64) {
	end := threadCPU()
	runtime.UnlockOSThread()
	if c.start >= 0 && end >= 0 && c.b.N > 0 {
		ns := float64(end-c.start) / float64(c.b.N)
		c.b.ReportMetric(ns, "cpu-ns/op")
		if flops > 0 {
			c.b.ReportMetric(flops/ns, "GFLOP/s")
		}
	}
}

// BenchmarkAdditiveReset is Reset of a Bahdanau Memory (d=256, d_a=256): its
// cost is K = H̄W₂ᵀ, one MatVecBatch of S vectors.
func BenchmarkAdditiveReset(b *testing.B) {
	const d, da = 256, 256
	for _, S := range []int{512, 1024} {
		keys := rampMat(S, d)
		m := NewMemory(Additive(rampMat(da, d), rampMat(da, d), ramp(da)), keys, keys)
		b.Run(fmt.Sprintf("S=%d,d=%d,da=%d", S, d, da), func(b *testing.B) {
			benchISAs(b, func(b *testing.B) {
				c0 := startCPU(b)
				for b.Loop() {
					m.Reset(keys, keys)
				}
				c0.stop(2.0 * float64(S*d*da))
			})
		})
	}
}

// BenchmarkManyFormat is AttendMany of B ScaledDot queries against S=4096
// keys and values (d=128) stored in each format on the widened route
// ("widened": blocks widened once for every query, whatever B), against B
// Attend calls ("steps": each query its own streaming pass over the stored
// rows): the two routes AttendMany chooses between.
func BenchmarkManyFormat(b *testing.B) {
	const S, d = 4096, 128
	keys, vals := rampMat(S, d), rampMat(S, d)
	for _, f := range allFormats[1:] {
		m := NewMemoryFormat(ScaledDot(), f, keys, vals)
		for _, B := range []int{2, 4, 8, 32, 64} {
			w, c, q := rampMat(B, S), rampMat(B, d), rampMat(B, d)
			b.Run(fmt.Sprintf("%s/B=%d/widened", f, B), func(b *testing.B) {
				setTuning(b, func(t *tuning) { t.manyWidenMin, t.manyWidenQ8Min = 2, 2 })
				m.AttendMany(w, c, q)
				c0 := startCPU(b)
				for b.Loop() {
					m.AttendMany(w, c, q)
				}
				c0.stop(0)
			})
			b.Run(fmt.Sprintf("%s/B=%d/steps", f, B), func(b *testing.B) {
				c0 := startCPU(b)
				for b.Loop() {
					for i := range B {
						m.Attend(row(w, i), row(c, i), row(q, i))
					}
				}
				c0.stop(0)
			})
		}
	}
}
