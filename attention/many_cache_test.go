package attention

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/heedml/heed/kernels"

	"github.com/heedml/heed/internal/allocs"
)

// TestAttendManyPackedCaches checks that AttendMany's packed Kᵀ and values
// follow every change of the keys: keys and values rewritten in place and
// Reset (the same buffers), then a call of few queries (not the Gemm route,
// which nonetheless makes the next call a later one), then calls on the Gemm
// route; and a Float32 cache grown by Append between Gemm calls. Every row is
// checked against the oracle over the current keys.
func TestAttendManyPackedCaches(t *testing.T) {
	setTuning(t, func(t *tuning) { t.manyGemmMin = 4 })
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(21, 22))
		// dv spans whole panels of both x86 micro-kernels and a partial
		// one: a first call reads the values in place (PackedB.Ref).
		const S, dk, dv = 70, 20, 70
		for _, kind := range []kind{kindDot, kindScaled, kindGeneral} {
			for _, shared := range []bool{false, true} {
				sc, o, qd := newScorer(rng, kind, 7, dk, 5)
				keys := randMat(rng, S, dk, 1)
				vals, values := keys, keys
				if !shared {
					vals = randMat(rng, S, dv, 2)
					values = vals
				}
				m := NewMemory(sc, keys, values)
				call := func(what string, B int) {
					q := randMat(rng, B, qd, 1)
					w := randMat(rng, B, S, 0)
					c := randMat(rng, B, vals.Cols, 0)
					m.AttendMany(w, c, q)
					for b := range B {
						o.checkStep(t, fmt.Sprintf("%s shared=%v %s query %d", sc, shared, what, b),
							row(w, b), row(c, b), row(q, b), keys, vals, allTrue(S))
					}
				}
				call("first", 8)
				call("later", 8)
				for r := range 3 {
					refill(rng, keys)
					if !shared {
						refill(rng, vals)
					}
					m.Reset(keys, values)
					if r > 0 {
						call(fmt.Sprintf("round %d, few queries", r), 2)
					}
					call(fmt.Sprintf("round %d, Gemm", r), 8)
					call(fmt.Sprintf("round %d, Gemm again", r), 8)
				}
			}
			// A Float32 cache: Append changes the keys the packed caches hold.
			sc, o, qd := newScorer(rng, kind, 7, dk, 5)
			m := NewEmptyMemory(sc, Float32, dk, dv, S)
			keys, vals := randMat(rng, S, dk, 0), randMat(rng, S, dv, 0)
			for n := 1; n <= S; n++ {
				m.Append(row(keys, n-1), row(vals, n-1))
				if n%9 != 0 {
					continue
				}
				for range 2 {
					B := 8
					q := randMat(rng, B, qd, 1)
					w := randMat(rng, B, n, 0)
					c := randMat(rng, B, dv, 0)
					m.AttendMany(w, c, q)
					for b := range B {
						o.checkStep(t, fmt.Sprintf("%s cache of %d query %d", sc, n, b),
							row(w, b), row(c, b), row(q, b), rows(keys, 0, n), rows(vals, 0, n), allTrue(n))
					}
				}
			}
		}
	})
}

// refill sets every element of x to a new random value.
func refill(rng *rand.Rand, x kernels.Matrix) {
	for i := range x.Rows {
		for j := range row(x, i) {
			row(x, i)[j] = float32(rng.Float64()*2 - 1)
		}
	}
}

// allTrue returns n attended keys.
func allTrue(n int) []bool {
	att := make([]bool, n)
	for i := range att {
		att[i] = true
	}
	return att
}

// TestAttendManyPackedNoAllocs checks that the Gemm route allocates nothing
// once its packed caches are built, on later calls and on the first call
// after a Reset to keys no larger (the caches repacked in place).
func TestAttendManyPackedNoAllocs(t *testing.T) {
	skipSparse(t)
	setTuning(t, func(t *tuning) { t.manyGemmMin = 4 })
	rng := rand.New(rand.NewPCG(23, 24))
	keys, vals := randMat(rng, 300, 24, 0), randMat(rng, 300, 40, 0)
	q, w, c := randMat(rng, 70, 24, 0), randMat(rng, 70, 300, 0), randMat(rng, 70, 40, 0)
	m := NewMemory(Dot(), keys, vals)
	forEachISA(t, func(t *testing.T) {
		for name, f := range map[string]func(){
			"later": func() { m.AttendMany(w, c, q) },
			"first": func() { m.Reset(keys, vals); m.AttendMany(w, c, q) },
		} {
			if m.plan(callMany, q.Rows).route != routeManyGemm && kernels.Active() != kernels.Generic {
				t.Fatal("not the Gemm route")
			}
			f()
			if got := allocs.Count(allocRuns(20), f); got != 0 {
				t.Errorf("%s call allocates %d times", name, got)
			}
		}
	})
}
