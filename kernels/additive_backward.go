package kernels

// AdditiveScoreBackwardAdd adds the gradients of AdditiveScore's scores
// score_s = Σᵢ v[i]·tanh(q[i] + K[s,i]) to dq, dv and dk, given the gradient
// ds of the scores (len(ds) = k.Rows): in one pass over K, with
// t_s = tanh(q + K_s) recomputed (never stored),
//
//	dv += Σ_s ds[s]·t_s,   dq += Σ_s ds[s]·(v∘(1 − t_s²)),   row s of dk += ds[s]·(v∘(1 − t_s²)).
//
// dk may have no rows (Rows = 0) to skip the key gradient; else it is
// k.Rows×k.Cols. A row with ds[s] = 0 (a masked key) contributes exactly
// nothing: K_s is not read and dk's row s not written, so Inf or NaN there
// reach no output.
//
// Every ISA computes the same operations in the same order and gives the
// same bits: for each row s with ds[s] ≠ 0, in increasing s, and each column
// i, t = Tanh(q[i] + K[s,i]) (the sum rounded, Tanh's algorithm),
// w = 1 − t² and p = ds[s]·v[i] (each rounded once), then dv[i] += ds[s]·t,
// dq[i] += p·w and dk[s,i] += p·w, each a fused multiply-add.
//
// Accuracy: with m the number of rows with ds ≠ 0, t_si = tanh(q[i] + K[s,i])
// exactly, and dv[i], dq[i], dk[s,i] the values on entry, away from underflow
//
//	dv[i]:   within γₘ₊₆·(|dv[i]| + Σ_s|ds[s]·t_si|)
//	dq[i]:   within γₘ₊₁₃·(|dq[i]| + Σ_s|ds[s]·v[i]|)
//	dk[s,i]: within γ₁₄·(|dk[s,i]| + |ds[s]·v[i]|)
//
// (u = 2⁻²⁴, γₖ = k·u/(1−k·u)): the rounding of q + K and Tanh's 2 ULP put t
// within 6u·|t| (Tanh's derivative times the argument is at most tanh), and
// the sums round once per row. The derivative 1 − t² is formed from the
// float32 t, so its error is absolute, not relative (at most 13u): where
// tanh saturates to ±1, w = 0. Where values underflow, each row may add up to
// (1 + 6·|ds[s]|·(1 + |v[i]|))·η (η = 2⁻¹⁴⁹).
//
// Special values follow IEEE arithmetic through those operations, the same
// on every ISA (NaN in q, v, K or a nonzero ds gives NaN; q + K = ±Inf gives
// t = ±1 and w = 0; an infinite v[i] times w = 0 gives NaN).
//
// It panics, naming the sizes, before any work, unless k is a valid matrix,
// len(q) = len(v) = len(dq) = len(dv) = k.Cols, len(ds) = k.Rows, and dk is
// valid with no rows or k's shape, and if an output (dq, dv, dk) overlaps
// another or an input (k, q, v, ds). It does not allocate and is safe for
// concurrent use on disjoint outputs.
func AdditiveScoreBackwardAdd(dq, dv []float32, dk Matrix, k Matrix, q, v, ds []float32) {
	const name = "AdditiveScoreBackwardAdd"
	k.check(name, "k")
	dk.check(name, "dk")
	if len(q) != k.Cols || len(v) != k.Cols || len(dq) != k.Cols || len(dv) != k.Cols || len(ds) != k.Rows {
		panicf("%s: k is %d×%d but len(q)=%d, len(v)=%d, len(dq)=%d, len(dv)=%d, len(ds)=%d",
			name, k.Rows, k.Cols, len(q), len(v), len(dq), len(dv), len(ds))
	}
	if dk.Rows != 0 && (dk.Rows != k.Rows || dk.Cols != k.Cols) {
		panicf("%s: k is %d×%d but dk is %d×%d: want k's shape or no rows", name, k.Rows, k.Cols, dk.Rows, dk.Cols)
	}
	dks := dk.span()
	outs := [3]struct {
		n string
		s []float32
	}{{"dq", dq}, {"dv", dv}, {"dk", dks}}
	ins := [4]struct {
		n string
		s []float32
	}{{"k", k.span()}, {"q", q}, {"v", v}, {"ds", ds}}
	for i, o := range outs {
		for _, p := range outs[i+1:] {
			checkDisjoint(name, o.n, o.s, p.n, p.s)
		}
		for _, in := range ins {
			checkDisjoint(name, o.n, o.s, in.n, in.s)
		}
	}
	if k.Rows == 0 || k.Cols == 0 {
		return
	}
	if dk.Rows == 0 {
		dks = nil
	}
	additiveScoreBackward(dq, dv, dks, dk.Stride, k.span(), k.Stride, q, v, ds)
}
