package attention

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/heedml/heed/kernels"
)

// The fuzz targets check each public entry point against the float64 oracle
// on a random mechanism, shape, stride, mask and ISA drawn from the inputs
// (go test -run '^$' -fuzz '^FuzzAttend$' ./attention). Sizes stay small so
// that an execution costs well under a millisecond.

// useISA runs the rest of t under ISA number i (modulo the supported ones).
func useISA(t *testing.T, i uint8) {
	isas := kernels.Supported()
	prev := kernels.Active()
	if err := kernels.Use(isas[int(i)%len(isas)]); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kernels.Use(prev) })
}

// fuzzMemory builds a Memory of a random mechanism for S keys of length dk,
// with separate values when sep, and a mask mode; it returns what the oracle
// needs.
func fuzzMemory(rng *rand.Rand, S, dk int, k, mode uint8, sep bool) (m *Memory, o oracle, qd int, keys, vals kernels.Matrix, att []bool) {
	var sc Scorer
	sc, o, qd = newScorer(rng, allKinds[int(k)%len(allKinds)], 1+rng.IntN(24), dk, 1+rng.IntN(24))
	keys = randMat(rng, S, dk, rng.IntN(3))
	vals, values := keys, keys
	if sep {
		vals = randMat(rng, S, 1+rng.IntN(20), rng.IntN(3))
		values = vals
	}
	m = NewMemory(sc, keys, values)
	att = setMask(rng, m, int(mode)%5)
	return m, o, qd, keys, vals, att
}

// FuzzAttend checks a step, forced to split, to stream, or neither.
func FuzzAttend(f *testing.F) {
	f.Add(uint64(1), uint8(1), uint8(1), uint8(0), uint8(0), uint8(0), false, uint8(0))
	f.Add(uint64(2), uint8(130), uint8(33), uint8(4), uint8(2), uint8(1), true, uint8(1))
	f.Add(uint64(3), uint8(40), uint8(7), uint8(2), uint8(3), uint8(2), false, uint8(2))
	f.Fuzz(func(t *testing.T, seed uint64, s, d, k, mode, isa uint8, sep bool, route uint8) {
		useISA(t, isa)
		S, dk := 1+int(s)%160, 1+int(d)%48
		rng := rand.New(rand.NewPCG(seed, 99))
		switch route % 3 {
		case 1: // split
			setTuning(t, func(t *tuning) { t.splitMinRows, t.splitMinWork, t.contextBlock = 3, 0, 64 })
			setProcs(t, 3)
		case 2: // stream when the values are the keys, and small context blocks
			setTuning(t, func(t *tuning) { t.streamMin, t.contextBlock = 0, 64 })
		}
		m, o, qd, keys, vals, att := fuzzMemory(rng, S, dk, k, mode, sep)
		o.splits = m.plan(callAttend, 1).parts
		h := randVec(rng, qd)
		w, c := randVec(rng, S), randVec(rng, vals.Cols)
		m.Attend(w, c, h)
		o.checkStep(t, fmt.Sprintf("%s S=%d d=%d mode %d plan %+v", m.sc, S, dk, mode%5, m.plan(callAttend, 1)), w, c, h, keys, vals, att)
	})
}

// FuzzScores checks the raw scores.
func FuzzScores(f *testing.F) {
	f.Add(uint64(1), uint8(1), uint8(1), uint8(0), uint8(0), uint8(0))
	f.Add(uint64(2), uint8(70), uint8(33), uint8(4), uint8(2), uint8(1))
	f.Fuzz(func(t *testing.T, seed uint64, s, d, k, mode, isa uint8) {
		useISA(t, isa)
		S, dk := 1+int(s)%160, 1+int(d)%48
		rng := rand.New(rand.NewPCG(seed, 98))
		m, o, qd, keys, _, att := fuzzMemory(rng, S, dk, k, mode, false)
		h := randVec(rng, qd)
		dst := randVec(rng, S)
		m.Scores(dst, h)
		o.checkScores(t, fmt.Sprintf("%s S=%d d=%d mode %d", m.sc, S, dk, mode%5), dst, h, keys, att)
	})
}

// FuzzAttendMany checks many queries in one call, the first call of a
// sequence and the next (Vᵀ), with small blocks or the default ones, or
// (odd seeds) with every call of B > 1 on the Gemm route.
func FuzzAttendMany(f *testing.F) {
	f.Add(uint64(1), uint8(1), uint8(1), uint8(0), uint8(0), uint8(0), uint8(2), false, false)
	f.Add(uint64(2), uint8(70), uint8(33), uint8(4), uint8(2), uint8(1), uint8(5), true, true)
	f.Fuzz(func(t *testing.T, seed uint64, s, d, k, mode, isa, b uint8, sep, small bool) {
		useISA(t, isa)
		if small {
			setTuning(t, func(t *tuning) { t.manyBlock = 40 })
		}
		if seed%2 == 1 {
			setTuning(t, func(t *tuning) { t.manyGemmMin = 2 })
		}
		S, dk, B := 1+int(s)%100, 1+int(d)%40, int(b)%9
		rng := rand.New(rand.NewPCG(seed, 97))
		m, o, qd, keys, vals, att := fuzzMemory(rng, S, dk, k, mode, sep)
		q := randMat(rng, B, qd, rng.IntN(2))
		for call := range 2 {
			w, c := randMat(rng, B, S, rng.IntN(2)), randMat(rng, B, vals.Cols, rng.IntN(2))
			m.AttendMany(w, c, q)
			for i := range B {
				o.checkStep(t, fmt.Sprintf("%s S=%d d=%d B=%d mode %d call %d query %d", m.sc, S, dk, B, mode%5, call, i),
					row(w, i), row(c, i), row(q, i), keys, vals, att)
			}
		}
	})
}

// FuzzBatch checks a batch of sequences of random mechanisms and lengths, on
// one goroutine or spread over several.
func FuzzBatch(f *testing.F) {
	f.Add(uint64(1), uint8(1), uint8(0), false)
	f.Add(uint64(2), uint8(7), uint8(1), true)
	f.Fuzz(func(t *testing.T, seed uint64, count, isa uint8, parallel bool) {
		useISA(t, isa)
		if parallel {
			setTuning(t, func(t *tuning) { t.batchMinWork = 0 })
			setProcs(t, 3)
		}
		n := int(count) % 9
		rng := rand.New(rand.NewPCG(seed, 96))
		type seq struct {
			o          oracle
			keys, vals kernels.Matrix
			att        []bool
		}
		seqs := make([]seq, n)
		mems := make([]*Memory, n)
		w, c, q := make([][]float32, n), make([][]float32, n), make([][]float32, n)
		for i := range n {
			S, dk := 1+rng.IntN(60), 1+rng.IntN(24)
			var qd int
			mems[i], seqs[i].o, qd, seqs[i].keys, seqs[i].vals, seqs[i].att = fuzzMemory(rng, S, dk, uint8(rng.IntN(5)), uint8(rng.IntN(5)), rng.IntN(2) == 0)
			w[i], c[i], q[i] = randVec(rng, S), randVec(rng, seqs[i].vals.Cols), randVec(rng, qd)
		}
		var b Batch
		b.Attend(mems, w, c, q)
		for i, s := range seqs {
			s.o.checkStep(t, fmt.Sprintf("sequence %d of %d (%s)", i, n, mems[i].sc), w[i], c[i], q[i], s.keys, s.vals, s.att)
		}
	})
}

// FuzzMultiHead checks multi-head and grouped-query attention, causal or
// not, on one goroutine or several, with the default or small blocks, each
// output row against the oracle of its head with the tiled bound. The count of
// KV heads is a divisor of the heads chosen by h/8 (all of them: MultiHead);
// the block sizes by dk/12; the tiled or the direct (untiled) route by dh/12.
func FuzzMultiHead(f *testing.F) {
	f.Add(uint64(1), uint8(1), uint8(1), uint8(1), uint8(1), uint8(1), uint8(0), false, false)
	f.Add(uint64(2), uint8(5), uint8(9), uint8(4), uint8(3), uint8(3), uint8(1), true, true)
	f.Add(uint64(3), uint8(20), uint8(33), uint8(16), uint8(5), uint8(11), uint8(2), true, false)
	f.Fuzz(func(t *testing.T, seed uint64, tq, s, dk, dh, h, isa uint8, causal, parallel bool) {
		useISA(t, isa)
		if parallel {
			setTuning(t, func(t *tuning) { t.multiHeadMinWork = 0 })
			setProcs(t, 3)
		}
		if tiles := [][2]int{{0, 0}, {5, 7}, {1, 3}}[int(dk/12)%3]; tiles[0] > 0 {
			setTiles(t, tiles[0], tiles[1])
		}
		if (dh/12)%2 == 0 {
			setTuning(t, func(t *tuning) { t.multiHeadDirect = -1 })
		}
		T, S, heads := 1+int(tq)%24, 1+int(s)%40, 1+int(h)%6
		var divisors []int
		for kv := 1; kv <= heads; kv++ {
			if heads%kv == 0 {
				divisors = append(divisors, kv)
			}
		}
		kv := divisors[len(divisors)-1-int(h/8)%len(divisors)]
		dkh, dvh := 1+int(dk)%12, 1+int(dh)%12
		rng := rand.New(rand.NewPCG(seed, 95))
		q := randMat(rng, T, heads*dkh, rng.IntN(2))
		k, v := randMat(rng, S, kv*dkh, rng.IntN(2)), randMat(rng, S, kv*dvh, rng.IntN(2))
		out := randMat(rng, T, heads*dvh, 1)
		if kv == heads {
			MultiHead(out, q, k, v, heads, masking(causal), nil)
		} else {
			GroupedQuery(out, q, k, v, heads, kv, masking(causal), nil)
		}
		checkMultiHead(t, fmt.Sprintf("T=%d S=%d dk=%d dh=%d heads=%d kv=%d causal=%v", T, S, dkh, dvh, heads, kv, causal),
			out, q, k, v, heads, kv, causal)
	})
}

// FuzzAttentional checks h̃ = tanh(W_c[c; h]) (see TestAttentional).
func FuzzAttentional(f *testing.F) {
	f.Add(uint64(1), uint8(1), uint8(1), uint8(0), uint8(0))
	f.Add(uint64(2), uint8(33), uint8(17), uint8(64), uint8(1))
	f.Fuzz(func(t *testing.T, seed uint64, dout, dc, dh, isa uint8) {
		useISA(t, isa)
		rng := rand.New(rand.NewPCG(seed, 94))
		checkAttentional(t, rng, 1+int(dout)%48, int(dc)%48, int(dh)%48)
	})
}

// FuzzAttendBackward checks AttendBackward (B = 0 picks it) and
// AttendManyBackward of a random mechanism, shape, mask, set of wanted
// gradients and ISA against the gradient oracle.
func FuzzAttendBackward(f *testing.F) {
	f.Add(uint64(1), uint8(1), uint8(1), uint8(0), uint8(0), uint8(0), false, uint8(0))
	f.Add(uint64(2), uint8(70), uint8(33), uint8(4), uint8(2), uint8(1), true, uint8(3))
	f.Add(uint64(3), uint8(17), uint8(7), uint8(2), uint8(3), uint8(2), false, uint8(5))
	f.Fuzz(func(t *testing.T, seed uint64, s, d, k, mode, isa uint8, same bool, b uint8) {
		useISA(t, isa)
		S, dk, B := 1+int(s)%80, 1+int(d)%40, int(b)%9
		rng := rand.New(rand.NewPCG(seed, 97))
		c := newBackCase(t, rng, allKinds[int(k)%len(allKinds)], S, dk, max(1, B), same, int(mode)%5, B == 0)
		c.run()
		c.check(t, fmt.Sprintf("%s S=%d d=%d B=%d same=%v mode %d", c.m.sc, S, dk, B, same, mode%5))
	})
}

// FuzzMultiHeadBackward checks MultiHeadTrain and the MultiHead or
// GroupedQuery backward of a random shape, mask, block sizes, goroutines
// and ISA against the oracle.
func FuzzMultiHeadBackward(f *testing.F) {
	f.Add(uint64(1), uint8(5), uint8(7), uint8(2), uint8(3), uint8(2), uint8(1), false, uint8(0), uint8(0))
	f.Add(uint64(2), uint8(33), uint8(20), uint8(5), uint8(4), uint8(4), uint8(2), true, uint8(1), uint8(9))
	f.Fuzz(func(t *testing.T, seed uint64, T, S, dk, dh, heads, group uint8, causal bool, isa, tiles uint8) {
		useISA(t, isa)
		h := 1 + int(heads)%4
		g := 1 + int(group)%h
		for h%g != 0 {
			g--
		}
		sh := mhShape{T: 1 + int(T)%40, S: 1 + int(S)%40, dk: 1 + int(dk)%9, dh: 1 + int(dh)%9, heads: h, kv: h / g}
		if g == 1 {
			sh.kv = 0 // MultiHead
		}
		if tiles%4 != 0 {
			setBackTiles(t, 1+int(tiles)%7, 1+int(tiles/4)%9, 1+int(tiles/16)%4)
			setTiles(t, 2+int(tiles)%5, 1+int(tiles/8)%8)
		}
		if tiles%3 == 0 {
			setTuning(t, func(t *tuning) { t.multiHeadBackMin = 0 })
			setProcs(t, 1+int(tiles/3)%3)
		}
		rng := rand.New(rand.NewPCG(seed, 96))
		checkMultiHeadBackward(t, rng, sh, causal, nil)
	})
}
