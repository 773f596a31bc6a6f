package main

import "math/rand/v2"

// reverseBatch returns c.B pairs of the reversal task: a source of c.Ts
// tokens uniform over [2, c.V) and as target the source reversed (c.Tt must
// equal c.Ts), the target input being BOS and the target shifted right.
func reverseBatch(c Config, rng *rand.Rand) Batch {
	d := Batch{Src: make([]int32, c.B*c.Ts), TgtIn: make([]int32, c.B*c.Tt), TgtOut: make([]int32, c.B*c.Tt)}
	for b := 0; b < c.B; b++ {
		src := d.Src[b*c.Ts : (b+1)*c.Ts]
		for s := range src {
			src[s] = int32(2 + rng.IntN(c.V-2))
		}
		out, in := d.TgtOut[b*c.Tt:(b+1)*c.Tt], d.TgtIn[b*c.Tt:(b+1)*c.Tt]
		for t := range out {
			out[t] = src[c.Ts-1-t]
		}
		in[0] = BOS
		copy(in[1:], out)
	}
	return d
}

// randomBatch returns c.B pairs of tokens uniform over [2, c.V), source and
// target independent (the benchmark's data, as bench/torch/seq2seq.py's).
func randomBatch(c Config, rng *rand.Rand) Batch {
	d := Batch{Src: make([]int32, c.B*c.Ts), TgtIn: make([]int32, c.B*c.Tt), TgtOut: make([]int32, c.B*c.Tt)}
	for i := range d.Src {
		d.Src[i] = int32(2 + rng.IntN(c.V-2))
	}
	for b := 0; b < c.B; b++ {
		out, in := d.TgtOut[b*c.Tt:(b+1)*c.Tt], d.TgtIn[b*c.Tt:(b+1)*c.Tt]
		for t := range out {
			out[t] = int32(2 + rng.IntN(c.V-2))
		}
		in[0] = BOS
		copy(in[1:], out)
	}
	return d
}
