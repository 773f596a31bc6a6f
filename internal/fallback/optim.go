package fallback

import "math"

// The modes of AdamStep: how its weight decay applies.
const (
	AdamPlain     = 0 // no weight decay
	AdamL2        = 1 // g += wd·p before the moments
	AdamDecoupled = 2 // p *= wd (wd holds 1 − lr·λ) before the update
)

// AdamStep is the element-wise update of kernels.AdamStep, operation for
// operation (fma is fused, every other operation rounds once; len(g), len(m),
// len(v) ≥ len(p)): for each i, with the mode's decay first,
//
//	AdamL2:        g = fma(wd, p, g)
//	AdamDecoupled: p = p·wd
//	m = fma(b1, m, c1·g)
//	v = fma(b2, v, (c2·g)·g)
//	p = fma(−lr, m / fma(√v, rs, eps), p)
//
// lr is the step size with the first moment's bias correction folded in, rs
// the reciprocal square root of the second moment's.
func AdamStep(p, g, m, v []float32, lr, b1, c1, b2, c2, rs, eps, wd float32, mode int) {
	g, m, v = g[:len(p)], m[:len(p)], v[:len(p)]
	for i, pi := range p {
		gi := g[i]
		switch mode {
		case AdamL2:
			gi = fma32(wd, pi, gi)
		case AdamDecoupled:
			pi *= wd
		}
		mi := fma32(b1, m[i], float32(c1*gi))
		vi := fma32(b2, v[i], float32(float32(c2*gi)*gi))
		d := fma32(sqrt32(vi), rs, eps)
		m[i], v[i] = mi, vi
		p[i] = fma32(-lr, mi/d, pi)
	}
}

// sqrt32 returns √x correctly rounded: the float64 root of a float32 rounds
// to the float32 one (53 ≥ 2·24 + 2 bits).
func sqrt32(x float32) float32 { return float32(math.Sqrt(float64(x))) }

// The mode bits of SGDStep.
const (
	SGDDecay    = 1 // g += wd·p first
	SGDMomentum = 2 // b = fma(mu, b, g), the step along b
	SGDNesterov = 4 // with SGDMomentum: the step along fma(mu, b, g)
)

// SGDStep is the element-wise update of kernels.SGDStep, operation for
// operation (len(g) ≥ len(p), and len(b) ≥ len(p) with SGDMomentum): for each
// i,
//
//	SGDDecay:    g = fma(wd, p, g)
//	SGDMomentum: b = fma(mu, b, g); d = b, or fma(mu, b, g) with SGDNesterov
//	otherwise:   d = g
//	p = fma(−lr, d, p)
func SGDStep(p, g, b []float32, lr, mu, wd float32, mode int) {
	g = g[:len(p)]
	if mode&SGDMomentum != 0 {
		b = b[:len(p)]
	}
	for i, pi := range p {
		gi := g[i]
		if mode&SGDDecay != 0 {
			gi = fma32(wd, pi, gi)
		}
		d := gi
		if mode&SGDMomentum != 0 {
			bi := fma32(mu, b[i], gi)
			b[i] = bi
			d = bi
			if mode&SGDNesterov != 0 {
				d = fma32(mu, bi, gi)
			}
		}
		p[i] = fma32(-lr, d, pi)
	}
}
