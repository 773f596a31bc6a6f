package kernels

import (
	"math"

	"github.com/heedml/heed/internal/fallback"
)

// Decay is how AdamStep applies its weight decay λ.
type Decay uint8

const (
	// L2Decay adds λ·p to the gradient before the moments (Adam's, and
	// PyTorch Adam's weight_decay): g ← fma(λ, p, g).
	L2Decay Decay = iota
	// DecoupledDecay shrinks the parameters before the update (AdamW's):
	// p ← p·(1 − lr·λ).
	DecoupledDecay
)

// AdamConfig is the configuration of AdamStep: the step size LR, the moments'
// decay rates Beta1 and Beta2 in [0, 1), Eps added to the root of the second
// moment, and the weight decay λ = WeightDecay applied as Decay says (0: none).
// PyTorch's defaults are LR 1e-3, Beta1 0.9, Beta2 0.999, Eps 1e-8.
type AdamConfig struct {
	LR, Beta1, Beta2, Eps, WeightDecay float32
	Decay                              Decay
}

// AdamStep applies step number step (1 for the first) of Adam, or AdamW with
// DecoupledDecay, to the parameters p given their gradient g, updating the
// first and second moments m and v (zero before the first step) in place.
//
// Per call, in float64, rounded once to float32 each: the step size
// α = LR/(1 − β₁ˢᵗᵉᵖ), r = 1/√(1 − β₂ˢᵗᵉᵖ), c₁ = 1 − β₁, c₂ = 1 − β₂, and
// for DecoupledDecay k = 1 − LR·λ (the powers by repeated squaring, so the
// constants are the same bits on every architecture). Then for each i, in
// float32, in this order, where fma(a, b, c) = a·b + c rounded once and every
// other operation rounds once:
//
//	L2Decay, λ ≠ 0:        g ← fma(λ, p, g)   (into a register: g is not written)
//	DecoupledDecay, λ ≠ 0: p ← p·k
//	m ← fma(β₁, m, c₁·g)
//	v ← fma(β₂, v, (c₂·g)·g)
//	p ← fma(−α, m / fma(√v, r, Eps), p)
//
// This is PyTorch's Adam and AdamW (amsgrad off) up to the rounding: the same
// quantities, with the bias corrections folded into α and r. Every ISA
// computes exactly these operations (√ and / are correctly rounded
// everywhere, each fma a fused instruction), so the results are the same
// bits under every ISA, NaN results being NaN with an unspecified payload.
// NaN and ±Inf propagate as IEEE arithmetic says (a zero v with Eps = 0
// gives 0/0 = NaN where m is 0).
//
// It panics, before any work, if the slices' lengths differ, if any two of p,
// g, m and v overlap, if step < 1, if Beta1 or Beta2 is not in [0, 1), or if
// Decay is neither L2Decay nor DecoupledDecay. It
// does not allocate and is safe for concurrent use on disjoint slices.
func AdamStep(p, g, m, v []float32, c AdamConfig, step int) {
	const name = "AdamStep"
	checkSameLen(name, "p", "g", len(p), len(g))
	checkSameLen(name, "p", "m", len(p), len(m))
	checkSameLen(name, "p", "v", len(p), len(v))
	checkDisjoint4(name, []string{"p", "g", "m", "v"}, p, g, m, v)
	if step < 1 {
		panicf("%s: step=%d < 1", name, step)
	}
	for _, b := range [...]struct {
		n string
		v float32
	}{{"Beta1", c.Beta1}, {"Beta2", c.Beta2}} {
		if !(b.v >= 0 && b.v < 1) {
			panicf("%s: %s=%v not in [0, 1)", name, b.n, b.v)
		}
	}
	if c.Decay > DecoupledDecay {
		panicf("%s: unknown Decay %d", name, c.Decay)
	}
	k := c.consts(step)
	adamStep(p, g, m, v, &k)
}

// consts returns the per-call constants of AdamStep for step.
func (c AdamConfig) consts(step int) adamConsts {
	b1, b2 := float64(c.Beta1), float64(c.Beta2)
	k := adamConsts{
		lr: float32(float64(c.LR) / (1 - powInt(b1, step))),
		b1: c.Beta1, c1: float32(1 - b1),
		b2: c.Beta2, c2: float32(1 - b2),
		rs:  float32(1 / math.Sqrt(1-powInt(b2, step))),
		eps: c.Eps,
	}
	switch {
	case c.WeightDecay == 0:
	case c.Decay == DecoupledDecay:
		k.mode, k.wd = fallback.AdamDecoupled, float32(1-float64(float64(c.LR)*float64(c.WeightDecay)))
	default:
		k.mode, k.wd = fallback.AdamL2, c.WeightDecay
	}
	return k
}

// adamConsts are the per-call constants of AdamStep's kernels.
type adamConsts struct {
	lr, b1, c1, b2, c2, rs, eps, wd float32
	mode                            int
}

// powInt returns bⁿ for n ≥ 1 by repeated squaring in float64: the same bits
// on every architecture (math.Pow's may be fused differently).
func powInt(b float64, n int) float64 {
	r := 1.0
	for ; n > 0; n >>= 1 {
		if n&1 != 0 {
			r = float64(r * b)
		}
		b = float64(b * b)
	}
	return r
}

// Momentum is the kind of SGDStep's momentum.
type Momentum uint8

const (
	// HeavyBall steps along the momentum buffer: PyTorch SGD's default.
	HeavyBall Momentum = iota
	// Nesterov steps along g + μ·buf, the look-ahead (PyTorch's nesterov=True).
	Nesterov
)

// SGDConfig is the configuration of SGDStep: the learning rate LR, the
// momentum μ = Momentum (0: none) of the kind Kind, and the weight decay
// λ = WeightDecay (0: none), added to the gradient as PyTorch SGD does.
type SGDConfig struct {
	LR, Momentum, WeightDecay float32
	Kind                      Momentum
}

// SGDStep applies one step of stochastic gradient descent to the parameters
// p given their gradient g: for each i, in float32, where fma(a, b, c) =
// a·b + c rounded once,
//
//	λ ≠ 0: g ← fma(λ, p, g)   (into a register: g is not written)
//	μ ≠ 0: buf ← fma(μ, buf, g); d = buf, or fma(μ, buf, g) for Nesterov
//	μ = 0: d = g
//	p ← fma(−LR, d, p)
//
// buf, the momentum buffer, starts at zero: the first step then sets it to
// g, as PyTorch's does (dampening 0). The operations are the same on every
// ISA, so are the bits (NaN results are NaN, payload unspecified).
//
// With μ = 0, buf is not used and may be nil; otherwise it must have p's
// length. It panics, before any work, if the lengths differ, if any two of
// p, g and buf overlap, or if Kind is Nesterov with μ = 0. It does not
// allocate and is safe for concurrent use on disjoint slices.
func SGDStep(p, g, buf []float32, c SGDConfig) {
	const name = "SGDStep"
	checkSameLen(name, "p", "g", len(p), len(g))
	mode := 0
	if c.WeightDecay != 0 {
		mode |= fallback.SGDDecay
	}
	if c.Momentum != 0 {
		checkSameLen(name, "p", "buf", len(p), len(buf))
		checkDisjoint4(name, []string{"p", "g", "buf"}, p, g, buf)
		mode |= fallback.SGDMomentum
		if c.Kind == Nesterov {
			mode |= fallback.SGDNesterov
		}
	} else {
		checkDisjoint(name, "p", p, "g", g)
		if c.Kind == Nesterov {
			panicf("%s: Nesterov momentum with Momentum=0", name)
		}
	}
	sgdStep(p, g, buf, c.LR, c.Momentum, c.WeightDecay, mode)
}

// checkDisjoint4 panics, naming them, if any two of the slices overlap.
func checkDisjoint4(kernel string, names []string, s ...[]float32) {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			checkDisjoint(kernel, names[i], s[i], names[j], s[j])
		}
	}
}
