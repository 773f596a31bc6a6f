package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/heedml/heed/internal/fallback"
)

// decodeSet is a working set of key/value matrix pairs of one format, used in
// turn so that, when their total exceeds the caches, each step reads its
// pair from memory.
type decodeSet struct {
	format string
	bytes  int // bytes of one matrix
	step   func(i int, ctx, scores, h []float32, shared bool)
	scores func(i int, dst, h []float32)
	ctx    func(i int, dst, w []float32)
}

// newDecodeSets returns pairs of S×d matrices in each format, enough pairs
// that together they hold at least total bytes.
func newDecodeSets(S, d, total int) []decodeSet {
	rng := rand.New(rand.NewPCG(1, 1))
	a := randMatrix(rng, S, d)
	bf, f, q := NewStored(FormatBF16, a), NewStored(FormatF16, a), NewStored(FormatQ8, a)
	pairs := func(bytes int) int { return max(1, (total+2*bytes-1)/(2*bytes)) }
	var sets []decodeSet
	{
		n := 2 * pairs(4*S*d)
		ms := make([]Matrix, n)
		for i := range ms {
			ms[i] = Matrix{S, d, d, append([]float32(nil), a.Data...)}
		}
		sets = append(sets, decodeSet{"f32", 4 * S * d,
			func(i int, ctx, scores, h []float32, shared bool) {
				i %= n / 2
				st := SoftmaxState{Max: float32(math.Inf(-1))}
				if shared {
					DotSoftmaxMatTVec(ctx, scores, ms[2*i], h, &st)
					return
				}
				// Keys and values apart: no float32 fused kernel exists, so the
				// three passes (what attention does for them).
				MatVec(scores, ms[2*i], h)
				Softmax(scores, scores)
				MatTVecAdd(ctx, ms[2*i+1], scores)
			},
			func(i int, dst, h []float32) { MatVec(dst, ms[2*(i%(n/2))], h) },
			func(i int, dst, w []float32) { MatTVecAdd(dst, ms[2*(i%(n/2))+1], w) }})
	}
	{
		n := 2 * pairs(2*S*d)
		ms := make([]Stored, n)
		for i := range ms {
			ms[i] = Stored{format: FormatBF16, rows: S, cols: d, lda: d, u16: append([]uint16(nil), bf.u16...)}
		}
		sets = append(sets, decodeSet{"bf16", 2 * S * d,
			func(i int, ctx, scores, h []float32, shared bool) {
				i %= n / 2
				st := SoftmaxState{Max: float32(math.Inf(-1))}
				v := ms[2*i+1]
				if shared {
					v = ms[2*i]
				}
				DotSoftmaxMatTVecStored(ctx, scores, ms[2*i], v, h, &st)
			},
			func(i int, dst, h []float32) { MatVecStored(dst, ms[2*(i%(n/2))], h) },
			func(i int, dst, w []float32) { MatTVecStoredAdd(dst, ms[2*(i%(n/2))+1], w) }})
	}
	{
		n := 2 * pairs(2*S*d)
		ms := make([]Stored, n)
		for i := range ms {
			ms[i] = Stored{format: FormatF16, rows: S, cols: d, lda: d, u16: append([]uint16(nil), f.u16...)}
		}
		sets = append(sets, decodeSet{"f16", 2 * S * d,
			func(i int, ctx, scores, h []float32, shared bool) {
				i %= n / 2
				st := SoftmaxState{Max: float32(math.Inf(-1))}
				v := ms[2*i+1]
				if shared {
					v = ms[2*i]
				}
				DotSoftmaxMatTVecStored(ctx, scores, ms[2*i], v, h, &st)
			},
			func(i int, dst, h []float32) { MatVecStored(dst, ms[2*(i%(n/2))], h) },
			func(i int, dst, w []float32) { MatTVecStoredAdd(dst, ms[2*(i%(n/2))+1], w) }})
	}
	{
		qb := 36 * S * Q8Blocks(d)
		n := 2 * pairs(qb)
		ms := make([]Stored, n)
		for i := range ms {
			ms[i] = StoredOf(S, d, q.Stride(), append([]Q8Block(nil), q.q8...))
		}
		sets = append(sets, decodeSet{"q8", qb,
			func(i int, ctx, scores, h []float32, shared bool) {
				i %= n / 2
				st := SoftmaxState{Max: float32(math.Inf(-1))}
				v := ms[2*i+1]
				if shared {
					v = ms[2*i]
				}
				DotSoftmaxMatTVecStored(ctx, scores, ms[2*i], v, h, &st)
			},
			func(i int, dst, h []float32) { MatVecStored(dst, ms[2*(i%(n/2))], h) },
			func(i int, dst, w []float32) { MatTVecStoredAdd(dst, ms[2*(i%(n/2))+1], w) }})
		// The same matrices with the query quantised (ToQ8 of h counted in
		// each step and scores call).
		hq := make([]Q8Block, Q8Blocks(d))
		sets = append(sets, decodeSet{"q8q8", qb,
			func(i int, ctx, scores, h []float32, shared bool) {
				i %= n / 2
				st := SoftmaxState{Max: float32(math.Inf(-1))}
				v := ms[2*i+1]
				if shared {
					v = ms[2*i]
				}
				ToQ8(hq, h)
				DotSoftmaxMatTVecQ8Q8(ctx, scores, ms[2*i], v, hq, &st)
			},
			func(i int, dst, h []float32) { ToQ8(hq, h); MatVecQ8Q8(dst, ms[2*(i%(n/2))], hq) },
			func(i int, dst, w []float32) { MatTVecStoredAdd(dst, ms[2*(i%(n/2))+1], w) }})
	}
	return sets
}

// BenchmarkDecode measures the decode step (keys and values apart, and one
// matrix as both), the scores and the context per storage format, on the
// active ISA: BenchmarkDecode/<where>/<op>/<format>. "L2" is one 1024×128
// pair, "mem" 32768×128 pairs cycled through 768 MiB (beyond this machine's
// L3). MB/s counts the bytes of the matrices read; cpu-ns/op is the thread's
// CPU time per operation (cpuClock).
func BenchmarkDecode(b *testing.B) {
	for _, w := range []struct {
		name        string
		S, d, total int
	}{{"L2", 1024, 128, 0}, {"mem", 32768, 128, 768 << 20}} {
		b.Run(w.name, func(b *testing.B) { benchDecode(b, w.S, w.d, w.total) })
	}
}

func benchDecode(b *testing.B, S, d, total int) {
	w := struct{ S, d int }{S, d}
	{
		sets := newDecodeSets(w.S, w.d, total)
		rng := rand.New(rand.NewPCG(2, 2))
		h, ctx, scores := make([]float32, w.d), make([]float32, w.d), make([]float32, w.S)
		fill(rng, h)
		// Scores within a few units, as scaled attention scores are: with
		// a wide spread most weights are tiny and their products with the
		// values subnormal, which Intel cores take through slow assists.
		for i := range h {
			h[i] *= 0.01
		}
		weights := make([]float32, w.S)
		for i := range weights {
			weights[i] = 1 / float32(w.S)
		}
		for _, op := range []string{"step", "step-shared", "scores", "context"} {
			for _, s := range sets {
				bytes := s.bytes
				if op == "step" {
					bytes *= 2
				}
				b.Run(fmt.Sprintf("%s/%s", op, s.format), func(b *testing.B) {
					b.SetBytes(int64(bytes))
					i := 0
					c := startCPU(b)
					for b.Loop() {
						switch op {
						case "step", "step-shared":
							clear(ctx)
							s.step(i, ctx, scores, h, op == "step-shared")
						case "scores":
							s.scores(i, scores, h)
						default:
							s.ctx(i, ctx, weights)
						}
						i++
					}
					c.stop()
				})
			}
		}
	}
}

// BenchmarkDecodeCeiling is the read-only streaming rate from memory of this
// process (Sum over 768 MiB), the roofline for BenchmarkDecode/mem.
func BenchmarkDecodeCeiling(b *testing.B) {
	x := make([]float32, 192<<20)
	for i := range x {
		x[i] = 1
	}
	b.SetBytes(int64(4 * len(x)))
	for b.Loop() {
		Sum(x)
	}
}

// BenchmarkQ8Conversion is ToQ8 and FromQ8 on n values against the
// fallback's scalar loops (fallback.QuantizeQ8, DequantizeQ8), on the
// active ISA: n = 128 (one query per step, Q8Q8) and 4096 (a block of rows
// widened by AttendMany). cpu-ns/op is the thread's CPU time.
func BenchmarkQ8Conversion(b *testing.B) {
	x := make([]float32, 4096)
	for i := range x {
		x[i] = float32(i%17) - 8.3
	}
	q := make([]Q8Block, Q8Blocks(len(x)))
	for _, n := range []int{128, 4096} {
		for _, v := range []string{"ToQ8/go", "ToQ8", "FromQ8/go", "FromQ8"} {
			b.Run(fmt.Sprintf("%s/n=%d", v, n), func(b *testing.B) {
				c := startCPU(b)
				for b.Loop() {
					switch v {
					case "ToQ8/go":
						fallback.QuantizeQ8(fq8(q[:n/32]), x[:n])
					case "ToQ8":
						ToQ8(q[:n/32], x[:n])
					case "FromQ8/go":
						fallback.DequantizeQ8(x[:n], fq8(q[:n/32]))
					default:
						FromQ8(x[:n], q[:n/32])
					}
				}
				c.stop()
			})
		}
	}
}
