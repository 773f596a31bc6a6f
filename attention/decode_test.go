package attention

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/heedml/heed/internal/allocs"
)

// TestHeadCache checks multi-head decode with grouped-query heads in every
// format against the float64 oracle per head (query head i against KV head
// i/(heads/kvHeads)), on the stored values and on the appended float32 ones
// with the storage bound, with a mask and valid length, serially and with the
// KV heads spread over goroutines, under every ISA.
func TestHeadCache(t *testing.T) {
	for _, par := range []bool{false, true} {
		t.Run(fmt.Sprintf("parallel=%v", par), func(t *testing.T) {
			if par {
				setProcs(t, 3)
				setTuning(t, func(t *tuning) { t.multiHeadMinWork = 0 })
			} else {
				setProcs(t, 1)
			}
			forEachISA(t, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(21, 22))
				for _, f := range allFormats {
					for _, c := range []struct{ heads, kvHeads, dk, dh, S int }{
						{1, 1, 16, 8, 5}, {4, 4, 32, 32, 40}, {8, 2, 40, 24, 70}, {6, 1, 64, 64, 33}, {4, 2, 7, 9, 130},
					} {
						testHeadCache(t, rng, f, c.heads, c.kvHeads, c.dk, c.dh, c.S)
					}
				}
			})
		})
	}
}

func testHeadCache(t *testing.T, rng *rand.Rand, f Format, heads, kvHeads, dk, dh, S int) {
	t.Helper()
	keys, vals := randMat(rng, S, kvHeads*dk, 0), randMat(rng, S, kvHeads*dh, 0)
	c := NewHeadCache(f, heads, kvHeads, dk, dh, S-2)
	for s := range S {
		if c.Len() == c.Cap() {
			c.Grow(1)
		}
		c.Append(row(keys, s), row(vals, s))
	}
	att := make([]bool, S)
	for mode := range 3 {
		valid, mask := S, []bool(nil)
		switch mode {
		case 1:
			valid = rng.IntN(S + 1)
		case 2:
			mask = make([]bool, S)
			for s := range mask {
				mask[s] = rng.IntN(4) > 0
			}
		}
		c.SetValid(valid)
		c.SetMask(mask)
		for s := range att {
			att[s] = s < valid && (mask == nil || mask[s])
		}
		q := randVec(rng, heads*dk)
		out := randVec(rng, heads*dh)
		c.Attend(out, q)
		group := heads / kvHeads
		for i := range heads {
			g := i / group
			kg, vg := cols(keys, g*dk, (g+1)*dk), cols(vals, g*dh, (g+1)*dh)
			h := q[i*dk : (i+1)*dk]
			o := oracle{sc: ScaledDot(), rounds: formatRounds(f), qquery: f == Q8Q8}
			what := fmt.Sprintf("%s heads=%d kv=%d d_k=%d d_h=%d S=%d mode %d: head %d", f, heads, kvHeads, dk, dh, S, mode, i)
			checkContext(t, what+" (stored values)", out[i*dh:(i+1)*dh], o.step(h, widen(f, kg), widen(f, vg), att))
			o.store = f
			checkContext(t, what+" (float32 values + storage)", out[i*dh:(i+1)*dh], o.step(h, kg, vg, att))
		}
	}
}

// checkContext fails t unless ctx is within the bounds of the exact step r
// (all zero when no key is attended).
func checkContext(t *testing.T, what string, ctx []float32, r exactStep) {
	t.Helper()
	for j := range ctx {
		want, bound := 0.0, 0.0
		if r.n > 0 {
			want, bound = r.c[j], r.dc[j]
		}
		if err := math.Abs(float64(ctx[j]) - want); !(err <= bound) {
			t.Fatalf("%s: context[%d] = %v, want %v ± %.3g (error %.3g)", what, j, ctx[j], want, bound, err)
		}
	}
}

// TestHeadCacheNoAllocs checks that Append plus one multi-head step allocate
// nothing once capacity is reserved, serially and in parallel, under every
// ISA.
func TestHeadCacheNoAllocs(t *testing.T) {
	skipSparse(t)
	rng := rand.New(rand.NewPCG(1, 1))
	for _, f := range allFormats {
		for _, par := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/parallel=%v", f, par), func(t *testing.T) {
				if par {
					setProcs(t, 2)
					setTuning(t, func(t *tuning) { t.multiHeadMinWork = 0 })
				}
				c := NewHeadCache(f, 8, 2, 64, 64, 600)
				for range 500 {
					c.Append(randVec(rng, 128), randVec(rng, 128))
				}
				k, v, q, out := randVec(rng, 128), randVec(rng, 128), randVec(rng, 512), make([]float32, 512)
				forEachISA(t, func(t *testing.T) {
					c.Truncate(500)
					c.Append(k, v)
					c.Attend(out, q)
					n := allocs.Count(allocRuns(50), func() {
						c.Truncate(500)
						c.Append(k, v)
						c.Attend(out, q)
					})
					if n != 0 {
						t.Fatalf("Append + Attend: %d allocations in the measured calls", n)
					}
				})
			})
		}
	}
}

// TestHeadCachePanics checks the named panics of the multi-head cache.
func TestHeadCachePanics(t *testing.T) {
	c := NewHeadCache(BFloat16, 4, 2, 8, 4, 1)
	c.Append(make([]float32, 16), make([]float32, 8))
	for _, p := range []struct {
		f    func()
		want string
	}{
		{func() { NewHeadCache(Q8, 6, 4, 8, 8, 1) }, "6 query heads, 4 KV heads"},
		{func() { c.Append(make([]float32, 16), make([]float32, 8)) }, "cache full: 1 positions of capacity 1"},
		{func() { c.Append(make([]float32, 8), make([]float32, 8)) }, "len(key)=8, len(value)=8; want 2·8 and 2·4"},
		{func() { c.Attend(make([]float32, 16), make([]float32, 16)) }, "len(query)=16, len(out)=16; want 4·8 and 4·4"},
	} {
		if msg := panicMessage(p.f); !strings.Contains(msg, p.want) {
			t.Errorf("panic %q, want it to contain %q", msg, p.want)
		}
	}
}
