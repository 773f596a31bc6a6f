package kernels

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/heedml/heed/internal/fallback"

	"github.com/heedml/heed/internal/allocs"
)

// topKOracle returns the indices of the k best elements of x by sorting:
// NaN first, then by value descending (−0 = +0), ties by lower index.
func topKOracle(x []float32, k int) []int {
	p := make([]int, len(x))
	for i := range p {
		p[i] = i
	}
	sort.SliceStable(p, func(a, b int) bool {
		va, vb := x[p[a]], x[p[b]]
		if va != va || vb != vb {
			return va != va && vb == vb
		}
		return va > vb
	})
	return p[:k]
}

func TestTopK(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	type gen struct {
		name string
		f    func(i int) float32
	}
	gens := []gen{
		{"normal", func(int) float32 { return float32(rng.NormFloat64()) }},
		{"ties", func(int) float32 { return float32(rng.IntN(5)) }}, // many equal values
		{"ascending", func(i int) float32 { return float32(i) }},    // every element enters
		{"descending", func(i int) float32 { return float32(-i) }},  // none after the first k
		{"zeros", func(int) float32 { return float32(math.Copysign(0, float64(rng.IntN(2)*2-1))) }},
		{"specials", func(int) float32 { return specials[rng.IntN(len(specials))] }},
		{"masked", func(int) float32 { // −Inf but a few, one in a thousand +Inf
			switch r := rng.IntN(1000); {
			case r == 0:
				return float32(math.Inf(1))
			case r < 100:
				return float32(rng.NormFloat64())
			}
			return float32(math.Inf(-1))
		}},
		{"rare NaN", func(int) float32 {
			if rng.IntN(500) == 0 {
				return float32(math.NaN())
			}
			return float32(rng.NormFloat64())
		}},
	}
	forEachISA(t, func(t *testing.T) {
		for _, g := range gens {
			for _, n := range []int{0, 1, 5, 64, 127, 128, 129, 1000, 32000} {
				x := make([]float32, n)
				for i := range x {
					x[i] = g.f(i)
				}
				for _, k := range []int{0, 1, 2, 8, 64, 100} {
					if k > n {
						continue
					}
					idx, val := make([]int, k), make([]float32, k)
					TopK(idx, val, x)
					want := topKOracle(x, k)
					for j := range want {
						if idx[j] != want[j] || math.Float32bits(val[j]) != math.Float32bits(x[want[j]]) {
							t.Fatalf("%s n=%d k=%d: entry %d = (%d, %v), want (%d, %v)", g.name, n, k, j, idx[j], val[j], want[j], x[want[j]])
						}
					}
				}
			}
		}
	})
}

func TestTopKAllocs(t *testing.T) {
	x := make([]float32, 32000)
	fill(rand.New(rand.NewPCG(1, 2)), x)
	idx, val := make([]int, 8), make([]float32, 8)
	if a := allocs.Count(10, func() { TopK(idx, val, x) }); a != 0 {
		t.Fatalf("TopK allocates %d times", a)
	}
}

func TestTopKPanics(t *testing.T) {
	mustPanic(t, "heed/kernels: TopK: len(idx)=3, len(val)=2, len(x)=5; want len(idx) = len(val) ≤ len(x)",
		func() { TopK(make([]int, 3), make([]float32, 2), make([]float32, 5)) })
	mustPanic(t, "heed/kernels: TopK: len(idx)=6, len(val)=6, len(x)=5; want len(idx) = len(val) ≤ len(x)",
		func() { TopK(make([]int, 6), make([]float32, 6), make([]float32, 5)) })
}

// BenchmarkTopK times TopK beside Sum over the same vector, the proxy for
// one read of it (its target is at most 1.5× that read), under every ISA,
// with the thread CPU time per call.
func BenchmarkTopK(b *testing.B) {
	for _, n := range []int{32000, 100000} {
		x := make([]float32, n)
		rng := rand.New(rand.NewPCG(3, 4))
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		b.Run("n="+itoa(n)+"/Sum", func(b *testing.B) {
			forEachISA(b, func(b *testing.B) {
				b.SetBytes(int64(4 * n))
				c := startCPU(b)
				for b.Loop() {
					sink = Sum(x)
				}
				c.stop()
			})
		})
		for _, k := range []int{8, 64} {
			idx, val := make([]int, k), make([]float32, k)
			b.Run(benchName(n, k), func(b *testing.B) {
				forEachISA(b, func(b *testing.B) {
					b.SetBytes(int64(4 * n))
					c := startCPU(b)
					for b.Loop() {
						TopK(idx, val, x)
					}
					c.stop()
				})
			})
		}
	}
}

func benchName(n, k int) string { return "n=" + itoa(n) + "/k=" + itoa(k) }

func itoa(v int) string {
	if v < 10 {
		return string(rune('0' + v))
	}
	return itoa(v/10) + string(rune('0'+v%10))
}

// TestFirstAbove checks TopK's scan on every ISA against fallback.FirstAbove
// at every length and position of the first hit, with canaries around.
func TestFirstAbove(t *testing.T) {
	nan := float32(math.NaN())
	forEachISA(t, func(t *testing.T) {
		for _, n := range smallLengths[:200] {
			for _, hit := range []int{-1, 0, n / 3, n - 1} {
				for _, hv := range []float32{2, nan} {
					x, ok := slab(t, n, 3)
					for i := range x {
						x[i] = float32(i%7) / 7 // ≤ t = 1
					}
					if hit >= 0 && n > 0 {
						x[hit] = hv
						if hit+1 < n {
							x[hit+1] = 5
						}
					}
					if got, want := firstAbove(x, 1), fallback.FirstAbove(x, 1); got != want {
						t.Fatalf("n=%d hit=%d (%v): firstAbove = %d, want %d", n, hit, hv, got, want)
					}
					ok()
				}
			}
		}
	})
}

// TestTopKGuard runs TopK and its scans on slices flush against PROT_NONE
// pages.
func TestTopKGuard(t *testing.T) {
	forEachGuarded(t, 257, 2, func(t *testing.T, n int, get func(int) []float32) {
		x := get(n)
		for i := range x {
			x[i] = float32(-i)
		}
		if got := firstAbove(x, 0); got != n && got != 1-min(n, 1) {
			t.Fatalf("n=%d: firstAbove = %d", n, got)
		}
		var d [4]int32
		if got := aboveAll(d[:], x, -1.5); got != min(n, 2) {
			t.Fatalf("n=%d: aboveAll = %d, want %d", n, got, min(n, 2))
		}
		k := min(n, 8)
		idx, val := make([]int, k), make([]float32, k)
		TopK(idx, val, x)
		for j := range idx {
			if idx[j] != j {
				t.Fatalf("n=%d: TopK idx[%d] = %d", n, j, idx[j])
			}
		}
	})
}

// TestSpanMax checks TopK's first pass on every ISA: the maximum of each span
// of topKSpan elements against fallback.Max, and its NaN report for a NaN in
// each of a span's first 32 vectors of 8, at the end of a span and in the
// next, and none for a NaN just past the last span (which it must not read
// into the result).
func TestSpanMax(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	nan := float32(math.NaN())
	forEachISA(t, func(t *testing.T) {
		// NaN in each of the first 32 vectors of 8 (every accumulator of
		// every kernel), at the end, in the next span, past the spans.
		at := []int{-1, topKSpan - 1, topKSpan, topKSpan + 300}
		for v := 0; v < 32; v++ {
			at = append(at, v*8+v%8)
		}
		for _, nb := range []int{0, 1, 2, 3, 62, 195} {
			for _, nanAt := range append(at, nb*topKSpan-1, nb*topKSpan) {
				if nanAt >= nb*topKSpan+1 {
					continue
				}
				x := make([]float32, nb*topKSpan+1)
				for i := range x {
					x[i] = float32(rng.NormFloat64() * 100)
				}
				if nb > 0 {
					x[rng.IntN(nb*topKSpan)] = float32(math.Inf(1))
				}
				if nanAt >= 0 {
					x[nanAt] = nan
				}
				dst := make([]float32, nb+1)
				dst[nb] = canary
				gotNaN := spanMaxima(dst[:nb], x)
				wantNaN := nanAt >= 0 && nanAt < nb*topKSpan
				if gotNaN != wantNaN {
					t.Fatalf("nb=%d NaN at %d: spanMaxima reports NaN = %v, want %v", nb, nanAt, gotNaN, wantNaN)
				}
				if math.Float32bits(dst[nb]) != math.Float32bits(canary) {
					t.Fatalf("nb=%d: spanMaxima wrote past len(dst)", nb)
				}
				if wantNaN {
					continue
				}
				for j := 0; j < nb; j++ {
					if want := fallback.Max(x[j*topKSpan : (j+1)*topKSpan]); dst[j] != want {
						t.Fatalf("nb=%d: span %d max = %v, want %v", nb, j, dst[j], want)
					}
				}
			}
		}
	})
}

// TestSpanMaxInfinities checks spanMaxima's and spanMaxKth's NaN report
// (none) and results for spans of −Inf with +Inf elements, and of finite
// values near ±MaxFloat32, whose sums (the AVX2 kernels' NaN flag) become
// NaN: the flag must be confirmed.
func TestSpanMaxInfinities(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 30))
	forEachISA(t, func(t *testing.T) {
		for _, nb := range []int{1, 9, 62} {
			for _, fill := range []string{"infinities", "huge"} {
				x := make([]float32, nb*topKSpan)
				for i := range x {
					switch fill {
					case "infinities":
						x[i] = float32(math.Inf(-1))
						if rng.IntN(50) == 0 {
							x[i] = float32(math.Inf(1))
						}
					case "huge":
						x[i] = float32(rng.IntN(2)*2-1) * math.MaxFloat32 * float32(0.5+rng.Float64()/2)
					}
				}
				x[0] = float32(math.Inf(1))
				got := make([]float32, nb)
				if spanMaxima(got, x) {
					t.Fatalf("nb=%d %s: spanMaxima reports a NaN", nb, fill)
				}
				for j := range got {
					if want := fallback.Max(x[j*topKSpan : (j+1)*topKSpan]); got[j] != want {
						t.Fatalf("nb=%d %s: span %d max = %v, want %v", nb, fill, j, got[j], want)
					}
				}
				for k := 1; k <= 16; k++ {
					kth, nan, ok := spanMaxKth(got, x, k)
					if !ok {
						continue
					}
					s := slices.Clone(got)
					slices.SortFunc(s, func(a, b float32) int { return cmp.Compare(b, a) })
					w := float32(math.Inf(-1))
					if k <= nb {
						w = s[k-1]
					}
					if nan || kth != w {
						t.Fatalf("nb=%d %s k=%d: spanMaxKth = %v, NaN %v; want %v, no NaN", nb, fill, k, kth, nan, w)
					}
				}
			}
		}
	})
}

// aboveAllRef is aboveAll by fallback.FirstAbove.
func aboveAllRef(dst []int32, x []float32, t float32) int {
	n := 0
	for i := 0; i < len(x); i++ {
		if x[i] <= t {
			continue
		}
		if n == len(dst) {
			return -1
		}
		dst[n] = int32(i)
		n++
	}
	return n
}

// TestAboveAll checks TopK's collecting scan on every ISA against a Go loop:
// every length through four unrolled AVX-512 blocks, hits (numbers and NaN)
// at the start, inside, in the tail and at the end, up to every lane of a
// vector, and dst full (−1) or exactly full, with canaries around x and after
// dst.
func TestAboveAll(t *testing.T) {
	nan := float32(math.NaN())
	rng := rand.New(rand.NewPCG(19, 20))
	forEachISA(t, func(t *testing.T) {
		for _, n := range smallLengths[:260] {
			for _, hits := range []int{0, 1, 3, 17, n} {
				x, ok := slab(t, n, 3)
				for i := range x {
					x[i] = float32(i%7) / 7 // ≤ t = 1
				}
				for h := 0; h < min(hits, n); h++ {
					p := rng.IntN(n)
					if h == 0 {
						p = n - 1
					}
					x[p] = []float32{2, nan, float32(math.Inf(1)), 1.0000001}[h%4]
				}
				want := make([]int32, n+1)
				nw := aboveAllRef(want, x, 1)
				for _, capa := range []int{0, 1, nw, nw + 1, n + 1} {
					if capa < 0 {
						continue
					}
					got := make([]int32, capa+1)
					got[capa] = -7
					ng := aboveAll(got[:capa], x, 1)
					wn := nw
					if nw > capa {
						wn = -1
					}
					if ng != wn {
						t.Fatalf("n=%d hits=%d cap=%d: aboveAll = %d, want %d", n, hits, capa, ng, wn)
					}
					for j := 0; j < min(capa, nw); j++ {
						if got[j] != want[j] {
							t.Fatalf("n=%d hits=%d cap=%d: dst[%d] = %d, want %d", n, hits, capa, j, got[j], want[j])
						}
					}
					if got[capa] != -7 {
						t.Fatalf("n=%d cap=%d: aboveAll wrote past len(dst)", n, capa)
					}
				}
				ok()
			}
		}
	})
}

// TestTopKSearch covers TopK's search by collecting: NaN and large values
// after the last span (which spanMax does not read), ties across spans at
// the floor, −0 and +0 as the k-th value, and more candidates than it
// collects (it then scans as TopKWith does).
func TestTopKSearch(t *testing.T) {
	nan := float32(math.NaN())
	rng := rand.New(rand.NewPCG(21, 22))
	type tc struct {
		name string
		n    int
		f    func(x []float32)
	}
	cases := []tc{
		{"NaN after the spans", 32000, func(x []float32) { x[31990] = nan }},
		{"two NaN after the spans", 32000, func(x []float32) { x[31999] = nan; x[31800] = nan }},
		{"largest after the spans", 32100, func(x []float32) { x[32050] = 100; x[32099] = 99 }},
		{"ties at the floor", 32000, func(x []float32) {
			for j := 0; j < 62; j += 3 {
				x[j*topKSpan+rng.IntN(topKSpan)] = 50
			}
		}},
		{"300 ties on top", 32000, func(x []float32) { // more than topKCandsFew candidates
			for q := 0; q < 300; q++ {
				x[rng.IntN(len(x))] = 50
			}
		}},
		{"signed zeros on top", 8192, func(x []float32) {
			for i := range x {
				x[i] = -1 - x[i]*x[i]
			}
			for j := 0; j < 16; j++ {
				x[j*topKSpan+rng.IntN(topKSpan)] = float32(math.Copysign(0, float64(j%2*2-1)))
			}
		}},
		{"8 signed zeros on top", 8192, func(x []float32) { // 8 tied candidates
			for i := range x {
				x[i] = -1 - x[i]*x[i]
			}
			for j := 0; j < 8; j++ {
				x[j*2*topKSpan+rng.IntN(topKSpan)] = float32(math.Copysign(0, float64(j%2*2-1)))
			}
		}},
		{"8 negatives on top", 32000, func(x []float32) { // 8 negative candidates
			for i := range x {
				x[i] = -10 - x[i]*x[i]
			}
			for j := 0; j < 8; j++ {
				x[(j*7%8)*3*topKSpan+rng.IntN(topKSpan)] = -1 - float32(j)/2
			}
		}},
		{"all negative", 32000, func(x []float32) {
			for i := range x {
				x[i] = -1 - x[i]*x[i]
			}
		}},
		{"many candidates", 100000, func(x []float32) {
			for i := range x {
				x[i] = float32(rng.IntN(3))
			}
		}},
		{"all −Inf", 32000, func(x []float32) {
			for i := range x {
				x[i] = float32(math.Inf(-1))
			}
		}},
		{"few above −Inf", 32000, func(x []float32) {
			for i := range x {
				x[i] = float32(math.Inf(-1))
			}
			x[700], x[31000], x[20] = 1, 2, -1
		}},
		{"all equal", 65536, func(x []float32) {
			for i := range x {
				x[i] = 1
			}
		}},
	}
	forEachISA(t, func(t *testing.T) {
		for _, c := range cases {
			x := make([]float32, c.n)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
			c.f(x)
			for _, k := range []int{1, 8, 64} {
				idx, val := make([]int, k), make([]float32, k)
				TopK(idx, val, x)
				want := topKOracle(x, k)
				for j := range want {
					if idx[j] != want[j] || math.Float32bits(val[j]) != math.Float32bits(x[want[j]]) {
						t.Fatalf("%s k=%d: entry %d = (%d, %v), want (%d, %v)", c.name, k, j, idx[j], val[j], want[j], x[want[j]])
					}
				}
			}
		}
	})
}

// kthLargestRef is the k-th largest of m by sorting a copy.
func kthLargestRef(m []float32, k int) float32 {
	s := slices.Clone(m)
	slices.SortFunc(s, func(a, b float32) int { return cmp.Compare(b, a) })
	return s[k-1]
}

// TestKthLargest checks TopK's floor on every ISA against sorting: one to
// four groups of maxima, random, with ties, ±0, ±Inf, and the −Inf padding
// TopK adds, for every k it uses.
func TestKthLargest(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	inf := float32(math.Inf(1))
	fills := []struct {
		name string
		f    func(i int) float32
	}{
		{"normal", func(int) float32 { return float32(rng.NormFloat64()) }},
		{"ties", func(int) float32 { return float32(rng.IntN(4)) }},
		{"zeros", func(int) float32 { return float32(math.Copysign(0, float64(rng.IntN(2)*2-1))) }},
		{"infinities", func(int) float32 { return []float32{inf, -inf, 1, -1}[rng.IntN(4)] }},
		{"increasing", func(i int) float32 { return float32(i) }},
		{"decreasing", func(i int) float32 { return float32(-i) }},
	}
	forEachISA(t, func(t *testing.T) {
		for _, groups := range []int{1, 2, 4} {
			for _, f := range fills {
				for _, nb := range []int{groups * topKGroup, groups*topKGroup - 2, groups*topKGroup - 63} {
					m := make([]float32, groups*topKGroup)
					for i := range m {
						m[i] = f.f(i)
						if i >= nb {
							m[i] = -inf
						}
					}
					for _, k := range []int{1, 2, 7, 8, 31, 64} {
						if k > nb {
							continue
						}
						got, want := kthLargest(m, k), kthLargestRef(m, k)
						if got != want {
							t.Fatalf("%s, %d maxima of %d, k=%d: kthLargest = %v, want %v", f.name, nb, len(m), k, got, want)
						}
					}
				}
			}
		}
	})
}

// TestAboveSpans checks TopK's collection over the selected spans on every
// ISA against aboveAll span by span: no span, the first, the last, all,
// spans in different groups of maxima, hits at the spans' ends, NaN
// elements and maxima, maxima above t past the last whole span (not read),
// every length of the rest after the last span through four unrolled
// AVX-512 blocks, and dst full.
func TestAboveSpans(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	nan := float32(math.NaN())
	forEachISA(t, func(t *testing.T) {
		for _, nb := range []int{0, 1, 5, 64, 65, 130} {
			for _, rest := range []int{0, 1, 7, 8, 9, 16, 63, 64, 65, 255, 256, 257, 511} {
				if nb > 5 && rest%8 != 1 {
					continue
				}
				groups := max(1, (nb+topKGroup-1)/topKGroup) * topKGroup
				x, ok := slab(t, nb*topKSpan+rest, 1)
				for i := range x {
					x[i] = float32(rng.NormFloat64())
				}
				if nb > 0 {
					x[0], x[topKSpan-1], x[nb*topKSpan-1] = 5, nan, 6
				}
				if rest > 0 {
					x[len(x)-1] = nan
					x[nb*topKSpan] = 3
				}
				bm := make([]float32, groups)
				for _, sel := range []string{"none", "first", "last", "all", "random", "nan"} {
					for j := range bm {
						on := false
						switch sel {
						case "first":
							on = j == 0
						case "last":
							on = j == nb-1
						case "all", "nan":
							on = true
						case "random":
							on = rng.IntN(3) == 0
						}
						bm[j] = 0
						if on {
							bm[j] = 2
							if sel == "nan" && j%2 == 1 {
								bm[j] = nan
							}
						}
					}
					var want []int32
					add := func(start, end int) {
						d := make([]int32, end-start)
						r := aboveAllRef(d, x[start:end], 1)
						for _, i := range d[:r] {
							want = append(want, i+int32(start))
						}
					}
					for j := 0; j < nb; j++ {
						if !(bm[j] <= 1) {
							add(j*topKSpan, (j+1)*topKSpan)
						}
					}
					add(nb*topKSpan, len(x))
					for _, capa := range []int{0, len(want) - 1, len(want), len(want) + 5} {
						if capa < 0 {
							continue
						}
						got := make([]int32, capa+1)
						got[capa] = -7
						n := aboveSpans(got[:capa], x, bm, 1)
						wn := len(want)
						if wn > capa {
							wn = -1
						}
						if n != wn {
							t.Fatalf("nb=%d rest=%d %s cap=%d: aboveSpans = %d, want %d", nb, rest, sel, capa, n, wn)
						}
						if wn >= 0 && !slices.Equal(got[:n], want) {
							t.Fatalf("nb=%d rest=%d %s: aboveSpans gave %v, want %v", nb, rest, sel, got[:n], want)
						}
						if got[capa] != -7 {
							t.Fatalf("nb=%d rest=%d %s cap=%d: aboveSpans wrote past len(dst)", nb, rest, sel, capa)
						}
					}
				}
				ok()
			}
		}
	})
}

// TestAboveSpansGuard runs aboveSpans and kthLargest on maxima and spans
// flush against PROT_NONE pages, with the first and the last whole span
// selected (and maxima above t past them) and every length of the rest.
func TestAboveSpansGuard(t *testing.T) {
	const nb = 3
	gx, gm := newGuard(t, nb*topKSpan+topKSpan), newGuard(t, topKGroup)
	forEachISA(t, func(t *testing.T) {
		for rest := 0; rest < topKSpan; rest += 1 + rest/16 {
			for _, atEnd := range []bool{false, true} {
				x, bm := gx.at(nb*topKSpan+rest, atEnd), gm.at(topKGroup, atEnd)
				for i := range x {
					x[i] = float32(i % 5)
				}
				for j := range bm {
					bm[j] = 4
				}
				bm[1] = 0
				x[nb*topKSpan-1] = 4
				var d [2 * topKSpan]int32
				want := 102 + 103 + 1 + (rest+1)/5 // i%5 = 4 in spans 0 and 2, the last of span 2, and the rest
				got := aboveSpans(d[:], x, bm, 3.5)
				if got != want || d[0] != 4 || ((rest+1)/5 == 0 && d[want-1] != int32(nb*topKSpan-1)) {
					t.Fatalf("rest=%d atEnd=%v: aboveSpans = %d (first %d, last %d), want %d", rest, atEnd, got, d[0], d[max(got-1, 0)], want)
				}
				if got := kthLargest(bm, 2); got != 4 {
					t.Fatalf("atEnd=%v: kthLargest = %v, want 4", atEnd, got)
				}
			}
		}
	})
}

// TestSpanMaxKth checks the k-th largest span maximum that spanMax takes in
// the same pass where a kernel does (spanMaxKth's ok), against sorting the
// maxima, for every k it takes, ties, ±0, ±Inf, fewer spans than k (−Inf),
// and its maxima and NaN report against spanMaxima's.
func TestSpanMaxKth(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	inf := float32(math.Inf(1))
	forEachISA(t, func(t *testing.T) {
		for _, nb := range []int{0, 1, 7, 8, 9, 16, 17, 62, 195} {
			for _, fill := range []string{"normal", "ties", "zeros", "infinities", "increasing", "decreasing", "nan"} {
				x := make([]float32, nb*topKSpan+3)
				for i := range x {
					x[i] = float32(rng.NormFloat64())
				}
				for j := 0; j < nb; j++ {
					var m float32
					switch fill {
					case "normal", "nan":
						m = 10 + float32(rng.NormFloat64())
					case "ties":
						m = float32(10 + rng.IntN(3))
					case "zeros":
						m = float32(math.Copysign(0, float64(rng.IntN(2)*2-1)))
						for i := j * topKSpan; i < (j+1)*topKSpan; i++ {
							x[i] = -1 - float32(rng.IntN(5))
						}
					case "infinities":
						m = []float32{inf, 10, 11}[rng.IntN(3)]
					case "increasing":
						m = 10 + float32(j)
					case "decreasing":
						m = 10 - float32(j)
					}
					x[j*topKSpan+rng.IntN(topKSpan)] = m
				}
				if fill == "nan" && nb > 0 {
					x[rng.IntN(nb*topKSpan)] = float32(math.NaN())
				}
				want := make([]float32, nb)
				wantNaN := spanMaxima(want, x)
				for k := 1; k <= 16; k++ {
					got := make([]float32, nb+1)
					got[nb] = canary
					kth, nan, ok := spanMaxKth(got[:nb], x, k)
					if !ok {
						continue
					}
					if nan != wantNaN {
						t.Fatalf("nb=%d %s k=%d: NaN = %v, want %v", nb, fill, k, nan, wantNaN)
					}
					if math.Float32bits(got[nb]) != math.Float32bits(canary) {
						t.Fatalf("nb=%d %s: spanMaxKth wrote past len(dst)", nb, fill)
					}
					if nan {
						continue
					}
					if !slices.Equal(got[:nb], want) {
						t.Fatalf("nb=%d %s k=%d: maxima %v, want %v", nb, fill, k, got[:nb], want)
					}
					w := float32(math.Inf(-1))
					if k <= nb {
						s := slices.Clone(want)
						slices.SortFunc(s, func(a, b float32) int { return cmp.Compare(b, a) })
						w = s[k-1]
					}
					if kth != w {
						t.Fatalf("nb=%d %s k=%d: k-th largest maximum = %v, want %v", nb, fill, k, kth, w)
					}
				}
			}
		}
	})
}
