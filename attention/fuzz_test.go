package attention

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// FuzzAttend checks a step of a random mechanism, shape, stride and mask
// against the float64 oracle (go test -fuzz FuzzAttend ./attention).
func FuzzAttend(f *testing.F) {
	f.Add(uint64(1), uint8(1), uint8(1), uint8(0), uint8(0), false)
	f.Add(uint64(2), uint8(130), uint8(33), uint8(4), uint8(2), true)
	f.Add(uint64(3), uint8(40), uint8(7), uint8(2), uint8(3), true)
	f.Fuzz(func(t *testing.T, seed uint64, s, d, k, mode uint8, split bool) {
		S, dk := 1+int(s), 1+int(d)%96
		rng := rand.New(rand.NewPCG(seed, 99))
		sc, o, qd := newScorer(rng, allKinds[int(k)%len(allKinds)], 1+rng.IntN(40), dk, 1+rng.IntN(40))
		keys := randMat(rng, S, dk, rng.IntN(3))
		vals := randMat(rng, S, 1+rng.IntN(20), rng.IntN(3))
		if split {
			setTuning(t, func(t *tuning) { t.splitMinRows, t.splitMinWork = 3, 0 })
		}
		m := NewMemory(sc, keys, vals)
		att := setMask(rng, m, int(mode)%5)
		o.splits = m.plan(callAttend, 1).parts
		h := randVec(rng, qd)
		w, c := randVec(rng, S), randVec(rng, vals.Cols)
		m.Attend(w, c, h)
		o.checkStep(t, fmt.Sprintf("%s S=%d d=%d mode %d parts %d", sc, S, dk, mode%5, o.splits), w, c, h, keys, vals, att)
	})
}
