package main

import (
	"math/rand/v2"
	"testing"

	"github.com/heedml/heed/internal/allocs"
)

// TestTrainingReducesLoss trains a small model on the reversal task under
// every score and checks that it learns: the mean loss of the last 50 steps
// must be below a third of the first 50's (a model that has not learned the
// task stays near ln(V−2) ≈ 2.6).
func TestTrainingReducesLoss(t *testing.T) {
	steps := 500
	if testing.Short() {
		steps = 300
	}
	for _, score := range []string{"dot", "general", "additive"} {
		t.Run(score, func(t *testing.T) {
			c := Config{V: 16, E: 16, H: 32, B: 16, Ts: 6, Tt: 6, Score: score, Adam: defaultAdam}
			c.Adam.LR = 1e-2
			md := NewModel(c, 3)
			rng := rand.New(rand.NewPCG(4, 5))
			var first, last float64
			for i := 0; i < steps; i++ {
				l := float64(md.Step(reverseBatch(c, rng)))
				if i < 50 {
					first += l / 50
				}
				if i >= steps-50 {
					last += l / 50
				}
			}
			t.Logf("%s: mean loss %.4f over the first 50 steps, %.4f over the last 50", score, first, last)
			if last > first/3 {
				t.Errorf("%s: mean loss %.4f over the first 50 steps, %.4f over the last 50: not learning", score, first, last)
			}
		})
	}
}

// TestStepNoAllocs checks that a whole training step allocates nothing once
// the model is built and has run a step.
func TestStepNoAllocs(t *testing.T) {
	for _, score := range []string{"dot", "general", "additive"} {
		c := Config{V: 40, E: 16, H: 24, B: 4, Ts: 5, Tt: 4, Score: score}
		md := NewModel(c, 1)
		d := randomBatch(c, rand.New(rand.NewPCG(1, 2)))
		md.Step(d)
		if n := allocs.Count(5, func() { md.Step(d) }); n != 0 {
			t.Errorf("%s: a training step allocates %d times", score, n)
		}
	}
}
