package main

import . "github.com/heedml/heed/asmgen/arm64"

func init() {
	registerNEON("sigmoid", func(f *neonFile) {
		genElementwiseNEON(f, "sigmoidNEON", "1/(1+e^−x[i])", func() *neonMath { return newNEONMath(f, neonSigmoid) },
			func(m *neonMath, x []Reg, tmp [][]Reg) []Reg { return m.sigmoid(x, tmp) })
	})
}

// sigmoid emits σ(x_j) as fallback.Sigmoid, operation for operation (its FMAs
// as FMLA/FMLS): t = −x clamped to [−SigmoidClamp, SigmoidTHi] (FMIN and FMAX
// keep NaN), n = round(t·log₂e) by the shifter, r = t − n·Ln2Hi − n·Ln2Lo,
// q = Exp's polynomial past its constant term, p = 2⁻ⁿ from the exponent
// bits, σ = p / ((p + 1) + r·q), then +0 where x < SigmoidLo. x is not
// modified; tmp[j] needs 4 registers.
func (m *neonMath) sigmoid(x []Reg, tmp [][]Reg) []Reg {
	f, k := m.f, len(x)
	t, s, n, b := neonCol(tmp, 0), neonCol(tmp, 1), neonCol(tmp, 2), neonCol(tmp, 3)
	sh, one := m.full["shifter"], m.full["one"]
	l2e, hi, lo := m.lane["log2e"], m.lane["ln2hi"], m.lane["ln2lo"]
	neonEach(k, func(j int) { f.v(FNEG(t[j], x[j])) })
	neonEach(k, func(j int) { f.v(FMIN(t[j], t[j], m.full["thi"])) })
	neonEach(k, func(j int) { f.v(FMAX(t[j], t[j], m.full["nclamp"])) })
	neonEach(k, func(j int) { m.mov(s[j], sh) })
	neonEach(k, func(j int) { f.v(FMLAE(s[j], t[j], l2e.r, l2e.i)) }) // s = t·log₂e + shifter
	neonEach(k, func(j int) { f.v(FSUB(n[j], s[j], sh)) })            // n = round(t·log₂e)
	neonEach(k, func(j int) { f.v(FMLSE(t[j], n[j], hi.r, hi.i)) })   // r = t − n·Ln2Hi
	neonEach(k, func(j int) { f.v(FMLSE(t[j], n[j], lo.r, lo.i)) })   // r −= n·Ln2Lo
	r := t
	q := m.horner(r, n, b, []string{"e1", "e2", "e3", "e4", "e5", "e6"})
	p := n // the register of n and b that horner did not leave q in
	if q[0] == n[0] {
		p = b
	}
	neonEach(k, func(j int) { f.v(SHL(s[j], s[j], 23)) })  // n in the exponent field
	neonEach(k, func(j int) { f.v(SUB(p[j], one, s[j])) }) // 2⁻ⁿ: one's bits − n<<23
	d := s
	neonEach(k, func(j int) { f.v(FADD(d[j], p[j], one)) })  // p + 1
	neonEach(k, func(j int) { f.v(FMLA(d[j], r[j], q[j])) }) // + r·q, rounded once
	neonEach(k, func(j int) { f.v(FDIV(p[j], p[j], d[j])) })
	lt := r
	neonEach(k, func(j int) { f.v(FCMGT(lt[j], m.full["lo"], x[j])) }) // x < SigmoidLo (false on NaN)
	neonEach(k, func(j int) { f.v(BIC(p[j], p[j], lt[j])) })
	return p
}
