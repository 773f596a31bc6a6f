package attention

import "github.com/heedml/heed/kernels"

type kind uint8

const (
	kindDot kind = iota
	kindScaled
	kindCosine
	kindGeneral
	kindAdditive
)

var kindNames = [...]string{
	kindDot:      "Luong dot",
	kindScaled:   "scaled dot",
	kindCosine:   "cosine",
	kindGeneral:  "Luong general",
	kindAdditive: "Bahdanau",
}

// Scorer is an attention score function of a query h and a key h̄_s. Build one
// with [Dot], [ScaledDot], [Cosine], [General] or [Additive]; a [Memory] uses it.
// A Scorer holds references to its weight matrices, not copies: they must not
// change while a Memory built from it is in use.
type Scorer struct {
	kind kind
	w    kernels.Matrix // General: W (d_q×d_k). Additive: W₁ (d_a×d_q).
	w2   kernels.Matrix // Additive: W₂ (d_a×d_k).
	v    []float32      // Additive: v (d_a).
}

// String returns the mechanism's name, as used in panic messages.
func (s Scorer) String() string { return kindNames[s.kind] }

// Dot is Luong's dot score hᵀh̄_s; the query and keys have the same length.
func Dot() Scorer { return Scorer{kind: kindDot} }

// ScaledDot is the scaled dot-product score hᵀh̄_s/√d, d the key length.
func ScaledDot() Scorer { return Scorer{kind: kindScaled} }

// Cosine is the cosine similarity hᵀh̄_s/(‖h‖·‖h̄_s‖). A zero query or key has
// similarity 0 with everything; an infinite or NaN element makes its scores
// NaN. For any finite query and keys, whatever their magnitudes, each score is
// within 3·γ_{d+6}·Σ_i|h_i·h̄_si|/(‖h‖·‖h̄_s‖) + d·2⁻¹⁰⁰ of the exact cosine
// (nothing overflows or underflows beyond that). The key norms are cached
// when a Memory is built or Reset.
func Cosine() Scorer { return Scorer{kind: kindCosine} }

// General is Luong's general (multiplicative) score hᵀW h̄_s for the d_q×d_k
// matrix W, computed as h̄_s·u with u = Wᵀh formed once per query. It panics
// if W is not a valid matrix.
func General(w kernels.Matrix) Scorer {
	checkMatrix("Luong general", "W", w)
	return Scorer{kind: kindGeneral, w: w}
}

// Additive is Bahdanau's score vᵀtanh(W₁h + W₂h̄_s) for W₁ (d_a×d_q), W₂
// (d_a×d_k) and v (length d_a). A [Memory] caches K = H̄W₂ᵀ (S×d_a) when it is
// built or Reset, so W₂ and the keys must not change in between. It panics
// unless W₁ and W₂ have len(v) rows.
func Additive(w1, w2 kernels.Matrix, v []float32) Scorer {
	checkMatrix("Bahdanau", "W1", w1)
	checkMatrix("Bahdanau", "W2", w2)
	if w1.Rows != len(v) || w2.Rows != len(v) {
		panicf("Bahdanau: W1 is %d×%d and W2 is %d×%d but len(v)=%d; want both with len(v) rows",
			w1.Rows, w1.Cols, w2.Rows, w2.Cols, len(v))
	}
	return Scorer{kind: kindAdditive, w: w1, w2: w2, v: v}
}

// keyDim returns the key length the scorer requires, or −1 if any.
func (s Scorer) keyDim() int {
	switch s.kind {
	case kindGeneral:
		return s.w.Cols
	case kindAdditive:
		return s.w2.Cols
	}
	return -1
}

// queryDim returns the query length for keys of length dk.
func (s Scorer) queryDim(dk int) int {
	switch s.kind {
	case kindGeneral:
		return s.w.Rows
	case kindAdditive:
		return s.w.Cols
	}
	return dk
}

// projDim returns the length of the query-side vector a step computes (the
// scaled or unit query, u = Wᵀh, q = W₁h), 0 when the query is used as it is.
func (s Scorer) projDim(dk int) int {
	switch s.kind {
	case kindScaled, kindCosine:
		return dk
	case kindGeneral:
		return s.w.Cols
	case kindAdditive:
		return s.w.Rows
	}
	return 0
}
