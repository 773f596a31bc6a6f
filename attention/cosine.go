package attention

import (
	"math"

	"github.com/heedml/heed/kernels"
)

// The cosine score of query h and key k is computed as (k·ĥ)·(1/‖k‖) with the
// unit query ĥ = h/‖h‖: |k·ĥ| ≤ ‖k‖, so no partial sum can overflow, and the
// products that underflow cost at most d·2⁻¹⁵⁰/‖k‖ of the score. That is
// negligible, and 1/‖k‖ a normal float32, while ‖k‖ lies in [normLo, normHi];
// the keys outside it ("wide" keys: tiny, huge, or not finite) are scored in
// float64 instead.
const (
	normLo = 0x1p-50
	normHi = 0x1p100
)

// norm returns ‖x‖ for any x without overflow or underflow: the float32 Dot
// when its result is far inside the normal range (no square can then have
// overflowed, and the ones that underflowed are below its rounding error),
// else a float64 sum of squares, which no float32 input overflows or
// underflows.
func norm(x []float32) float64 {
	if d := kernels.Dot(x, x); d >= 0x1p-100 && d <= 0x1p100 {
		return math.Sqrt(float64(d))
	}
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s)
}

// cosineKeys sets the key norms' cache: m.invNorm[s] = 1/‖k_s‖ for the keys
// whose norm is in [normLo, normHi], 0 for the others, and m.wide to the
// indices of the keys with a norm that is neither 0 nor in that range.
func (m *Memory) cosineKeys() {
	S := m.keys.Rows
	m.invNorm = grow(m.invNorm, S)
	m.wide = m.wide[:0]
	for s := range S {
		n := norm(row(m.keys, s))
		m.invNorm[s] = 0
		switch {
		case n >= normLo && n <= normHi:
			m.invNorm[s] = float32(1 / n)
		case n != 0:
			m.wide = append(m.wide, int32(s))
		}
	}
}

// unitQuery sets dst to h/‖h‖ (0 for a zero h), each element rounded once
// from its float64 value when ‖h‖ is far from the float32 range's ends.
func unitQuery(dst, h []float32) {
	n := norm(h)
	copy(dst, h)
	switch {
	case n >= 0x1p-60 && n <= 0x1p60:
		kernels.Scale(dst, float32(1/n), dst)
	case n == 0:
	default:
		for i, v := range h {
			dst[i] = float32(float64(v) / n)
		}
	}
}

// cosineScores turns x, the products k_s·ĥ of keys [lo, lo+len(x)) with the
// unit query qv, into their cosine scores.
func (m *Memory) cosineScores(x, qv []float32, lo int) {
	inv := m.invNorm[lo : lo+len(x)]
	for i := range x {
		x[i] *= inv[i]
	}
	for _, s := range m.wide {
		if i := int(s) - lo; i >= 0 && i < len(x) {
			x[i] = wideCosine(row(m.keys, int(s)), qv)
		}
	}
}

// wideCosine returns the cosine score of key k and unit query qv in float64.
func wideCosine(k, qv []float32) float32 {
	var dot, kk float64
	for i, v := range k {
		dot += float64(v) * float64(qv[i])
		kk += float64(v) * float64(v)
	}
	return float32(dot / math.Sqrt(kk))
}
