package bench

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/heedml/heed/attention"
	"github.com/heedml/heed/kernels"
)

// The decode step from memory (StepMemory): a Luong dot step, values = keys,
// over DecodeMemories matrices of S×d in turn, so that each step finds its
// keys in DRAM rather than in a cache warmed by the step before. heed runs it
// three ways, each under every ISA: Attend (heed/<isa>), the one streaming
// kernel Attend is built on (DotSoftmaxMatTVec: scores and the unnormalised
// context, A read once), and its three separate kernels (MatVec, Softmax,
// MatTVec: A read twice). The peers run their usual composition. Its bytes
// count A once, the least a step must read, so that the fraction is of the
// step's own ceiling: the separate kernels cannot exceed 0.5.

// DecodeMemories is the number of Memories the decode step from memory takes
// in turn: at least six, and together at least twice the last-level cache
// (as the memory ceiling's buffers), so that each step's keys were evicted
// from it since that Memory's last step.
var DecodeMemories = decodeMemories(cacheSizes()[2], 4*int64(32768*decodeShapes[32768]))

func decodeMemories(llc, each int64) int {
	return max(6, int((2*llc+each-1)/each))
}

// decodeShapes maps the decode step's S to its d: 16 MiB of float32 keys.
var decodeShapes = map[int]int{32768: 128}

// decodeVariant selects how heed runs the decode step from memory.
type decodeVariant int

const (
	decodeAttend   decodeVariant = iota // attention.Memory.Attend
	decodeFused                         // kernels.DotSoftmaxMatTVec, then ctx/Σ
	decodeSeparate                      // kernels.MatVec, Softmax, MatTVec
)

// decodeImpls returns heed's kernel-level variants of the decode step under
// isa at the AVX-512 width bits (0: the package's choice): implementations
// that do StepMemory only.
func decodeImpls(isa kernels.ISA, bits int) []*Impl {
	return []*Impl{
		{
			Name: heedName(isa, bits) + " DotSoftmaxMatTVec", Heed: true, ISA: isa, Width: bits, Decode: decodeFused,
			Note: map[Kernel]string{StepMemory: "one kernels.DotSoftmaxMatTVec pass (scores and the context, A read once), then the context times 1/Σ; the weights stay scores"},
		},
		{
			Name: heedName(isa, bits) + " MatVec+MatTVec", Heed: true, ISA: isa, Width: bits, Decode: decodeSeparate,
			Note: map[Kernel]string{StepMemory: "kernels.MatVec, Softmax, MatTVec (A read twice)"},
		},
	}
}

func newDecodeCase(c *Case, r *rand.Rand) {
	S := c.N
	d := decodeShapes[S]
	a := &attnInputs{S: S, D: d}
	c.attn = a
	for range DecodeMemories {
		a.batch = append(a.batch, matrix(r, S, d, 1))
		a.mems = append(a.mems, attention.NewMemory(attention.Dot(), a.batch[len(a.batch)-1], a.batch[len(a.batch)-1]))
	}
	a.keys, a.mem = a.batch[0], a.mems[0]
	a.h = uniform(r, d, 1)
	a.weights, a.ctx, a.scores = make([]float32, S), make([]float32, d), make([]float32, S)
	nd := int64(S) * int64(d)
	c.Label = fmt.Sprintf("%d×(S=%d,d=%d) in turn", DecodeMemories, S, d)
	c.Elems, c.Bytes, c.Flops = nd, 4*nd, 4*nd
	c.Footprint = int64(DecodeMemories) * 4 * nd
}

// bindDecode returns one decode step by im; each call takes the next Memory.
func (c *Case) bindDecode(im *Impl) func() {
	a := c.attn
	i := 0
	next := func() int {
		j := i
		i = (i + 1) % len(a.batch)
		return j
	}
	if !im.Heed {
		softmax := im.softmax()
		return func() {
			keys := a.batch[next()]
			im.MatVec(a.scores, keys, a.h)
			softmax(a.weights, a.scores)
			clear(a.ctx)
			im.MatTVec(a.ctx, keys, a.weights)
		}
	}
	switch im.Decode {
	case decodeFused:
		return func() {
			clear(a.ctx)
			st := kernels.SoftmaxState{Max: float32(math.Inf(-1))}
			kernels.DotSoftmaxMatTVec(a.ctx, a.weights, a.batch[next()], a.h, &st)
			kernels.Scale(a.ctx, 1/st.Sum, a.ctx)
		}
	case decodeSeparate:
		return func() {
			keys := a.batch[next()]
			kernels.MatVec(a.scores, keys, a.h)
			kernels.Softmax(a.weights, a.scores)
			clear(a.ctx)
			kernels.MatTVecAdd(a.ctx, keys, a.weights)
		}
	}
	return func() { a.mems[next()].Attend(a.weights, a.ctx, a.h) }
}

// DecodeTargets checks the decode step from memory against its goals: heed's
// best single-threaded ISA at least 0.85 of the memory ceiling (counting A
// once), and at least 1.5× heed's separate kernels on the same ISA.
func DecodeTargets(rs []Result) []Target {
	frac := Target{Goal: "decode step from memory ≥ 0.85 of the memory ceiling", Met: true}
	pair := Target{Goal: "decode step from memory ≥ 1.5× heed's separate MatVec, Softmax, MatTVec", Met: true}
	found := false
	for _, g := range byCase(rs) {
		if g[0].Case.Kernel != StepMemory {
			continue
		}
		found = true
		var best *Result // Attend or the fused kernel, whichever is faster
		type variant struct {
			isa   kernels.ISA
			width int
		}
		sep := map[variant]*Result{}
		for i := range g {
			r := &g[i]
			if !r.Impl.Heed || r.Impl.Parallel {
				continue
			}
			if r.Impl.Decode == decodeSeparate {
				sep[variant{r.Impl.ISA, r.Impl.Width}] = r
			} else if best == nil || r.Ns < best.Ns {
				best = r
			}
		}
		if best == nil {
			continue
		}
		frac.Met = best.Frac >= 0.85
		frac.Detail = fmt.Sprintf("%s %s: %.2f of ceiling", best.Impl.Name, fmtNs(best.Ns), best.Frac)
		if s := sep[variant{best.Impl.ISA, best.Impl.Width}]; s != nil {
			x := s.Ns / best.Ns
			pair.Met = x >= 1.5
			pair.Detail = fmt.Sprintf("%s %s vs %s %s: %.2f×", best.Impl.Name, fmtNs(best.Ns), s.Impl.Name, fmtNs(s.Ns), x)
		} else {
			pair.Met, pair.Skip = false, "heed's separate kernels not measured"
		}
	}
	if !found {
		frac.Met, frac.Skip = false, "not measured"
		pair.Met, pair.Skip = false, "not measured"
	}
	return []Target{frac, pair}
}
