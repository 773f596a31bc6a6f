package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkCellTrain runs the training passes of the recurrent cells under
// every ISA, at hidden sizes 128 and 512, beside LSTMCell and GRUCell (the
// inference passes the forwards extend). bytes/s counts the bytes read and
// written.
func BenchmarkCellTrain(b *testing.B) {
	rng := rand.New(rand.NewPCG(36, 30))
	for _, H := range []int{128, 512} {
		gates, b4, c := randIn(rng, 4*H, 4), randIn(rng, 4*H, 1), randIn(rng, H, 2)
		hOut, cOut, act := make([]float32, H), make([]float32, H), make([]float32, 5*H)
		LSTMCellTrain(hOut, cOut, act, gates, b4, c)
		dh, dc, dG, dcp := randIn(rng, H, 1), randIn(rng, H, 1), make([]float32, 4*H), make([]float32, H)
		g3, nh, bx, bh, h := randIn(rng, 3*H, 4), randIn(rng, H, 4), randIn(rng, 3*H, 1), randIn(rng, 3*H, 1), randIn(rng, H, 1)
		gact, dGx, dGh, dhp := make([]float32, 4*H), make([]float32, 3*H), make([]float32, 3*H), make([]float32, H)
		GRUCellTrain(hOut, gact, g3, nh, bx, bh, h)
		for _, k := range []struct {
			name  string
			bytes int // per position
			f     func()
		}{
			{"LSTMCell", 4 * (4 + 4 + 1 + 2), func() { LSTMCell(hOut, cOut, gates, b4, c) }},
			{"LSTMCellTrain", 4 * (4 + 4 + 1 + 2 + 5), func() { LSTMCellTrain(hOut, cOut, act, gates, b4, c) }},
			{"LSTMCellBackward", 4 * (5 + 3 + 5), func() { LSTMCellBackward(dG, dcp, act, c, dh, dc) }},
			{"GRUCell", 4 * (3 + 1 + 3 + 3 + 1 + 1), func() { GRUCell(hOut, g3, nh, bx, bh, h) }},
			{"GRUCellTrain", 4 * (3 + 1 + 3 + 3 + 1 + 1 + 4), func() { GRUCellTrain(hOut, gact, g3, nh, bx, bh, h) }},
			{"GRUCellBackward", 4 * (4 + 2 + 7), func() { GRUCellBackward(dGx, dGh, dhp, gact, h, dh) }},
		} {
			b.Run(fmt.Sprintf("%s/H=%d", k.name, H), func(b *testing.B) {
				forEachISA(b, func(b *testing.B) {
					b.SetBytes(int64(k.bytes * H))
					cpu := startCPU(b)
					for b.Loop() {
						k.f()
					}
					cpu.stop()
				})
			})
		}
	}
}
