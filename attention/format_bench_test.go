package attention

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"testing"

	"github.com/heedml/heed/kernels"
)

// BenchmarkCacheStep measures one decode step of a key-value cache in each
// format: Append of a key and a value, then Attend over the S positions
// (ScaledDot, d_k = d_v = 128), against the float32 Memory step on the same
// shape (NewMemory over separate keys and values, no Append: "f32-memory").
// "L2" holds one cache of S = 1024 (1 MiB of float32 keys and values);
// "mem" takes caches of S = 32768 in turn, as many as make twice a 260 MiB
// last-level cache in the format, so each step reads from DRAM. MB/s counts
// the bytes of keys and values a step reads. Run with GOMAXPROCS=1:
//
//	GOMAXPROCS=1 go test -run '^$' -bench '^BenchmarkCacheStep$' -count 5 ./attention
func BenchmarkCacheStep(b *testing.B) {
	const d = 128
	for _, c := range []struct {
		name string
		S    int
		mem  bool
	}{{"L2", 1024, false}, {"mem", 32768, true}} {
		for _, variant := range []string{"f32-memory", "float32", "bfloat16", "float16", "q8"} {
			b.Run(fmt.Sprintf("%s/%s", c.name, variant), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, 2))
				f := Float32
				for _, g := range allFormats {
					if g.String() == variant {
						f = g
					}
				}
				rowBytes := 2 * int64(f.rowBytes(d))
				count := 1
				if c.mem {
					count = int((2*260<<20)/(rowBytes*int64(c.S))) + 1
				}
				keys, vals := randMat(rng, c.S, d, 0), randMat(rng, c.S, d, 0)
				mems := make([]*Memory, count)
				for i := range mems {
					if variant == "f32-memory" {
						k := kernels.Matrix{Rows: c.S, Cols: d, Stride: d, Data: append([]float32(nil), keys.Data...)}
						v := kernels.Matrix{Rows: c.S, Cols: d, Stride: d, Data: append([]float32(nil), vals.Data...)}
						mems[i] = NewMemory(ScaledDot(), k, v)
						continue
					}
					m := NewEmptyMemory(ScaledDot(), f, d, d, c.S)
					m.appendRows(rows(keys, 0, c.S-1), rows(vals, 0, c.S-1))
					mems[i] = m
				}
				k, v, h := randVec(rng, d), randVec(rng, d), randVec(rng, d)
				w, ctx := make([]float32, c.S), make([]float32, d)
				b.SetBytes(rowBytes * int64(c.S))
				runtime.GC()
				b.ResetTimer()
				for i := range b.N {
					m := mems[i%count]
					if m.st != nil {
						m.Truncate(c.S - 1)
						m.Append(k, v)
					}
					m.Attend(w, ctx, h)
				}
				b.StopTimer()
				b.ReportMetric(float64(count), "caches")
			})
		}
	}
}

// TestCacheStepCPU measures what BenchmarkCacheStep does by the calling
// thread's CPU time, which a loaded machine's descheduling does not inflate:
// rounds of alternating batches of steps per variant, the median and minimum
// per step over rounds. It runs only with HEED_CPUTIME=1:
//
//	HEED_CPUTIME=1 GOMAXPROCS=1 go test -run '^TestCacheStepCPU$' -v ./attention
func TestCacheStepCPU(t *testing.T) {
	if os.Getenv("HEED_CPUTIME") != "1" || threadCPU() < 0 {
		t.Skip("set HEED_CPUTIME=1 (unix only)")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const d = 128
	variants := []string{"f32-memory", "float32", "bfloat16", "float16", "q8"}
	for _, c := range []struct {
		name   string
		S      int
		mem    bool
		rounds int
	}{{"L2", 1024, false, 30}, {"mem", 32768, true, 7}} {
		rng := rand.New(rand.NewPCG(1, 2))
		keys, vals := randMat(rng, c.S, d, 0), randMat(rng, c.S, d, 0)
		k, v, h := randVec(rng, d), randVec(rng, d), randVec(rng, d)
		w, ctx := make([]float32, c.S), make([]float32, d)
		mems := make([][]*Memory, len(variants))
		for vi, variant := range variants {
			f := Float32
			for _, g := range allFormats {
				if g.String() == variant {
					f = g
				}
			}
			count := 1
			if c.mem {
				count = int((2*260<<20)/(2*int64(f.rowBytes(d))*int64(c.S))) + 1
			}
			for range count {
				if variant == "f32-memory" {
					kk := kernels.Matrix{Rows: c.S, Cols: d, Stride: d, Data: append([]float32(nil), keys.Data...)}
					vv := kernels.Matrix{Rows: c.S, Cols: d, Stride: d, Data: append([]float32(nil), vals.Data...)}
					mems[vi] = append(mems[vi], NewMemory(ScaledDot(), kk, vv))
					continue
				}
				m := NewEmptyMemory(ScaledDot(), f, d, d, c.S)
				m.appendRows(rows(keys, 0, c.S-1), rows(vals, 0, c.S-1))
				mems[vi] = append(mems[vi], m)
			}
		}
		steps := func(ms []*Memory, n int) {
			for i := range n {
				m := ms[i%len(ms)]
				if m.st != nil {
					m.Truncate(c.S - 1)
					m.Append(k, v)
				}
				m.Attend(w, ctx, h)
			}
		}
		per := make([][]float64, len(variants))
		for r := range c.rounds {
			for j := range variants {
				vi := (j + r) % len(variants)
				n := 200
				if c.mem {
					n = len(mems[vi])
				}
				steps(mems[vi], 1)
				t0 := threadCPU()
				steps(mems[vi], n)
				per[vi] = append(per[vi], float64(threadCPU()-t0)/float64(n))
			}
		}
		var base float64
		for vi, variant := range variants {
			slices.Sort(per[vi])
			med, lo := per[vi][len(per[vi])/2], per[vi][0]
			if vi == 0 {
				base = med
			}
			bytes := float64(c.S) * 2 * float64(Float32.rowBytes(d))
			if vi > 1 {
				bytes = float64(c.S) * 2 * float64(allFormats[vi-1].rowBytes(d))
			}
			t.Logf("%s S=%d d=%d %-10s median %9.1f µs  min %9.1f µs  %5.2f× f32-memory  %6.2f GB/s (median)",
				c.name, c.S, d, variant, med/1e3, lo/1e3, base/med, bytes/med)
		}
		mems = nil
		runtime.GC()
	}
}
