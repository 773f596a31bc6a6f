// Command seq2seq trains heed's reference attentional encoder–decoder (an
// LSTM encoder and decoder with Luong or Bahdanau attention, the attentional
// state, a projection over the vocabulary, cross-entropy and Adam: the model
// bench/torch/seq2seq.py specifies) on the reversal task — a random source
// sequence, its reversal as the target — entirely on heed's kernels, and
// prints the loss as it falls:
//
//	go run ./examples/seq2seq -steps 600
//
// Every step is forward, backward through everything and one Adam update,
// with no allocation once the model is built.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"time"
)

func main() {
	var c Config
	flag.IntVar(&c.V, "vocab", 16, "vocabulary (tokens 0 and 1 are PAD and BOS)")
	flag.IntVar(&c.E, "emb", 32, "embedding size")
	flag.IntVar(&c.H, "hidden", 64, "hidden size")
	flag.IntVar(&c.B, "batch", 16, "pairs per step")
	flag.IntVar(&c.Ts, "len", 8, "sequence length")
	flag.StringVar(&c.Score, "score", "dot", "attention score: dot, general or additive")
	steps := flag.Int("steps", 600, "training steps")
	every := flag.Int("every", 50, "print the mean loss every this many steps")
	lr := flag.Float64("lr", 3e-3, "Adam's learning rate")
	seed := flag.Uint64("seed", 1, "seed of the weights and the data")
	flag.Parse()
	c.Tt = c.Ts
	c.Adam = defaultAdam
	c.Adam.LR = float32(*lr)
	if err := run(os.Stdout, c, *steps, *every, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "seq2seq:", err)
		os.Exit(1)
	}
}

// run trains the model c for steps steps on fresh batches of the reversal
// task, printing the mean loss of every `every` steps.
func run(w *os.File, c Config, steps, every int, seed uint64) error {
	if c.V < 3 || every < 1 {
		return fmt.Errorf("want a vocabulary of at least 3 and -every ≥ 1")
	}
	md := NewModel(c, seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	start, sum := time.Now(), 0.0
	for i := 1; i <= steps; i++ {
		sum += float64(md.Step(reverseBatch(c, rng)))
		if i%every == 0 {
			fmt.Fprintf(w, "step %5d  loss %.4f  (%.1f ms/step)\n", i, sum/float64(every), float64(time.Since(start).Microseconds())/1e3/float64(i))
			sum = 0
		}
	}
	return nil
}
