package bench

import (
	"fmt"
	"math/rand/v2"

	"github.com/heedml/heed/attention"
	"github.com/heedml/heed/kernels"
)

// The decode step on a stored cache (DecodeF32, DecodeBF16, DecodeF16,
// DecodeQ8, DecodeQ8Q8): a Luong dot step on a Memory that stores its keys and values
// (equal, but stored apart as a self-attention cache holds them) in one
// attention.Format (attention.NewEmptyMemory, filled by Append), S =
// 1024 in L2 (one Memory) and S = 32768 from memory (Memories in turn, as
// many as fill twice the last-level cache, at least six, as StepMemory).
// heed runs it as Memory.Attend (single-threaded, every ISA); a peer whose
// library has 16- or 8-bit types runs its own composition (FormatStep) on its
// own copies of the same keys and values, converted outside the timing. The
// bytes are those heed's step actually reads, the stored keys and values once
// (2 bytes an element for bfloat16 and float16, 36 per 32 for q8, 4 for
// float32), so that the fraction is of the format's own streaming ceiling; a
// peer's figure is those bytes over its time.

// FormatStep is a peer's decode step on keys and values it stores in its own
// library's 16- or 8-bit types.
type FormatStep struct {
	// Note says how the step is composed and stored.
	Note string
	// Bind converts the float32 keys of each Memory of a case (the values
	// are the keys, stored apart as heed's cache stores them) and returns
	// the step on copy i: the weights (where the peer returns them in
	// float32) and the context of query h.
	Bind func(keys []kernels.Matrix) func(i int, h, weights, ctx []float32)
	// Widen returns a as the peer stores it — the keys, the values (each one
	// matrix) or the query (a matrix of one row) — widened to float32:
	// TestDecodeFormat's float64 step runs on these.
	Widen func(a kernels.Matrix) kernels.Matrix
	// The peer's arithmetic against that float64 step: a score may be off by
	// ScoreRel·Σ|k̂·ĥ|, a weight by WeightAbs·max w, a context element by
	// OutRel·max|v̂| besides its float32 sum.
	ScoreRel, WeightAbs, OutRel float64
}

// formatKernels maps each stored-cache kernel to its format.
var formatKernels = map[Kernel]attention.Format{
	DecodeF32: attention.Float32, DecodeBF16: attention.BFloat16, DecodeF16: attention.Float16, DecodeQ8: attention.Q8,
	DecodeQ8Q8: attention.Q8Q8,
}

// isFormatStep reports whether k is a decode step on a stored cache.
func isFormatStep(k Kernel) bool { _, ok := formatKernels[k]; return ok }

// formatD is the key length of the stored-cache steps.
const formatD = 128

// formatSizes are the stored-cache steps' S: in L2, from memory.
var formatSizes = []int{1024, 32768}

// formatBytes returns the bytes of S keys of length d stored in f.
func formatBytes(f attention.Format, S, d int) int64 {
	per := int64(4 * d)
	switch f {
	case attention.BFloat16, attention.Float16:
		per = int64(2 * d)
	case attention.Q8, attention.Q8Q8:
		per = int64(36 * kernels.Q8Blocks(d))
	}
	return int64(S) * per
}

func newFormatCase(c *Case, r *rand.Rand) {
	f, S, d := formatKernels[c.Kernel], c.N, formatD
	a := &attnInputs{S: S, D: d}
	c.attn = a
	bytes := formatBytes(f, S, d)
	n := 1
	if S > formatSizes[0] { // from memory
		n = decodeMemories(cacheSizes()[2], bytes)
	}
	for range n {
		keys := matrix(r, S, d, 1)
		m := attention.NewEmptyMemory(attention.Dot(), f, d, d, S)
		for s := range S {
			row := keys.Data[s*d : (s+1)*d]
			m.Append(row, row)
		}
		a.batch = append(a.batch, keys)
		a.mems = append(a.mems, m)
	}
	a.keys, a.mem = a.batch[0], a.mems[0]
	a.h = uniform(r, d, 1)
	a.weights, a.ctx = make([]float32, S), make([]float32, d)
	c.Label = fmt.Sprintf("S=%d,d=%d %s", S, d, f)
	if n > 1 {
		c.Label = fmt.Sprintf("%d×(S=%d,d=%d) %s in turn", n, S, d, f)
	}
	// Append stores the key and the value apart: the step reads both.
	c.Elems, c.Bytes, c.Flops = int64(S)*int64(d), 2*bytes, 4*int64(S)*int64(d)
	c.Footprint = int64(n) * 2 * bytes
}

// bindFormat returns im's stored-cache step; each call takes the next Memory
// (heed) or the peer's next copy of its keys and values.
func (c *Case) bindFormat(im *Impl) func() {
	a, i := c.attn, 0
	if !im.Heed {
		step := im.Format[c.Kernel].Bind(a.batch)
		return func() {
			step(i, a.h, a.weights, a.ctx)
			i = (i + 1) % len(a.batch)
		}
	}
	return func() {
		a.mems[i].Attend(a.weights, a.ctx, a.h)
		i = (i + 1) % len(a.mems)
	}
}
