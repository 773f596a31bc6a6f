package kernels

import (
	"math"
	"testing"
)

// nanInputs are NaNs of both signs, quiet and signalling, with and without
// payloads.
var nanInputs = []uint32{0x7fc00000, 0x7fc12345, 0x7f800001, 0x7fa00000, 0xffc00000, 0xffc00001, 0xff812345}

const quietBit = 0x00400000

// TestNaNPayloads checks each kernel's stated NaN contract on every ISA, with
// the NaN at every position of lengths that cover the vector bodies and tails:
// Max and Softmax give the default quiet NaN; Exp returns a quiet NaN
// unchanged and a signalling one unchanged or quieted (payload and sign kept);
// Tanh gives a quiet NaN with the input's sign.
func TestNaNPayloads(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		for _, nb := range nanInputs {
			nan := math.Float32frombits(nb)
			for _, n := range []int{1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 64, 65} {
				for pos := 0; pos < n; pos++ {
					x := make([]float32, n)
					for i := range x {
						x[i] = float32(i%5) - 2
					}
					x[pos] = nan
					if m := math.Float32bits(Max(x)); m != 0x7fc00000 {
						t.Fatalf("Max(NaN %#08x at %d of %d) = %#08x, want 0x7fc00000", nb, pos, n, m)
					}
					d := make([]float32, n)
					Exp(d, x)
					if e := math.Float32bits(d[pos]); e != nb && e != nb|quietBit {
						t.Fatalf("Exp(NaN %#08x at %d of %d) = %#08x, want the input NaN, quieted or not", nb, pos, n, e)
					}
					Tanh(d, x)
					if th := math.Float32bits(d[pos]); th&0x7fc00000 != 0x7fc00000 || th>>31 != nb>>31 {
						t.Fatalf("Tanh(NaN %#08x at %d of %d) = %#08x, want a quiet NaN with the input's sign", nb, pos, n, th)
					}
					Softmax(d, x)
					for i, v := range d {
						if math.Float32bits(v) != 0x7fc00000 {
							t.Fatalf("Softmax(NaN %#08x at %d of %d)[%d] = %#08x, want 0x7fc00000", nb, pos, n, i, math.Float32bits(v))
						}
					}
				}
			}
		}
	})
}
