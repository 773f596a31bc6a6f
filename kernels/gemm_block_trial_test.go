//go:build heedtrial && amd64 && !purego

package kernels

import (
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

// TestGemmBlockTrial compares, interleaved in one process, the blocking of an
// in-place A before directMC ("old": no cap), with it ("new"), and A packed
// ("packA"), on n×n products, under both x86 micro-kernels (kernels/DESIGN.md,
// "GEMM").
func TestGemmBlockTrial(t *testing.T) {
	type variant struct {
		name string
		mk   gemmMicro
	}
	mod := func(base *gemmMicro, kc, mc int, direct bool) gemmMicro {
		mk := *base
		if kc > 0 {
			mk.kc = kc
		}
		if mc > 0 {
			mk.mc = mc
		}
		if !direct {
			mk.rows = nil
		}
		return mk
	}
	for _, base := range []*gemmMicro{gemmAVX512, gemmAVX2} {
		t.Logf("base nr=%d kc=%d mc=%d nc=%d", base.nr, base.kc, base.mc, base.nc)
		old := mod(base, 0, 0, true)
		old.l2 = 1 << 40
		vs := []variant{
			{"old", old},
			{"new", mod(base, 0, 0, true)},
			{"packA", mod(base, 0, 0, false)},
		}
		if os.Getenv("GEMM_TRIAL_NEIGHBOURS") != "" {
			for _, x := range []struct {
				name       string
				kc, mc, nc int
			}{{"nc=512", 0, 0, 512}, {"nc=256", 0, 0, 256}, {"kc=512", 512, 0, 0}, {"kc=256", 256, 0, 0}, {"kc=512,nc=512", 512, 0, 512}, {"mc=126", 0, 126, 0}} {
				v := mod(base, x.kc, x.mc, true)
				if x.nc > 0 {
					v.nc = x.nc
				}
				vs = append(vs, variant{x.name, v})
			}
		}
		rng := rand.New(rand.NewPCG(1, 1))
		for _, n := range []int{512, 1000, 1024} {
			a, _ := testMatrix(rng, n, n, 0, 0, 0, 0)
			b, _ := testMatrix(rng, n, n, 0, 0, 0, 0)
			c, _ := testMatrix(rng, n, n, 0, 0, 0, 0)
			times := make([][]int64, len(vs))
			reps := max(1, (1<<29)/(n*n*n))
			for r := 0; r < 15; r++ {
				for i := range vs {
					g := gemmOp{m: n, n: n, k: n, alpha: 1, a: a.Data, lda: n, b: b.Data, ldb: n, c: c.Data, ldc: n, micro: &vs[i].mk}
					t0 := threadCPU()
					for j := 0; j < reps; j++ {
						g.run(&trialBuf2)
					}
					times[i] = append(times[i], (threadCPU()-t0)/int64(reps))
				}
			}
			for i, v := range vs {
				slices.Sort(times[i])
				f := 2 * float64(n*n*n)
				t.Logf("nr=%d n=%4d %-16s kc=%3d mc=%4d nc=%4d: median %6.1f best %6.1f GFLOP/s", base.nr, n, v.name, v.mk.kc, v.mk.mc, v.mk.nc,
					f/float64(times[i][len(times[i])/2]), f/float64(times[i][0]))
			}
		}
	}
}

var trialBuf2 gemmBuf

// TestGemmPackedTrial times AttendMany's products at B = 256, S = 512,
// d = 256 with and without packed operands (attention/DESIGN.md).
func TestGemmPackedTrial(t *testing.T) {
	const B, S, d = 256, 512, 256
	rng := rand.New(rand.NewPCG(1, 1))
	q, _ := testMatrix(rng, B, d, 0, 0, 0, 0)
	kt, _ := testMatrix(rng, d, S, 0, 0, 0, 0)
	w, _ := testMatrix(rng, B, S, 0, 0, 0, 0)
	v, _ := testMatrix(rng, S, d, 0, 0, 0, 0)
	sc, _ := testMatrix(rng, B, S, 0, 0, 0, 0)
	ctx, _ := testMatrix(rng, B, d, 0, 0, 0, 0)
	keys, _ := testMatrix(rng, S, d, 0, 0, 0, 0)
	for _, isa := range []ISA{AVX512, AVX2} {
		Use(isa)
		var pk, pv, pk1 PackedB
		pk.Pack(NoTrans, kt)
		pv.Pack(NoTrans, v)
		var told, tnew, tmvb, tfirst []int64
		for r := 0; r < 41; r++ {
			t0 := threadCPU()
			Gemm(NoTrans, NoTrans, 1, q, kt, 0, sc)
			Gemm(NoTrans, NoTrans, 1, w, v, 0, ctx)
			t1 := threadCPU()
			GemmPacked(NoTrans, 1, q, &pk, 0, sc)
			GemmPacked(NoTrans, 1, w, &pv, 0, ctx)
			t2 := threadCPU()
			MatVecBatch(sc, keys, q) // a first call's scores
			t3 := threadCPU()
			pk1.Pack(Trans, keys) // a first call's scores through a packed Kᵀ
			GemmPacked(NoTrans, 1, q, &pk1, 0, sc)
			t4 := threadCPU()
			told, tnew = append(told, t1-t0), append(tnew, t2-t1)
			tmvb, tfirst = append(tmvb, t3-t2), append(tfirst, t4-t3)
		}
		for _, x := range [][]int64{told, tnew, tmvb, tfirst} {
			slices.Sort(x)
		}
		t.Logf("%v: later call's products: Gemm over Kᵀ and V %d µs, GemmPacked %d µs; first call's scores: MatVecBatch %d µs, Pack(Kᵀ)+GemmPacked %d µs (medians of 41, thread CPU)",
			isa, told[20]/1000, tnew[20]/1000, tmvb[20]/1000, tfirst[20]/1000)
	}
	Use(AVX512)
}
