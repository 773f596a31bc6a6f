package main

import . "github.com/heedml/heed/asmgen/arm64"

func init() {
	registerNEON("log", func(f *neonFile) {
		genElementwiseNEON(f, "logNEON", "ln x[i]", func() *neonMath { return newNEONMath(f, neonLog) },
			func(m *neonMath, x []Reg, tmp [][]Reg) []Reg { return m.log(x, tmp) })
	})
}

// log emits ln x_j as fallback.Log, operation for operation (its FMAs as
// FMLA): lanes below 2⁻¹²⁶ (also ≤ 0) scaled by 2²³ with their exponent
// lowered by 23, x = 2ᵉ·m with m ∈ [√½, √2) from the bits, f = m − 1,
// ln x = e·ln2 + f + (f²·(−½ + f·P(f)) + e·Ln2Lo32), then the special values
// blended in: +Inf and NaN → x, x < 0 → the default NaN, ±0 → −Inf. x is not
// modified; tmp[j] needs 6 registers.
func (m *neonMath) log(x []Reg, tmp [][]Reg) []Reg {
	f, k := m.f, len(x)
	t0, t1, t2, t3, y, t5 := neonCol(tmp, 0), neonCol(tmp, 1), neonCol(tmp, 2), neonCol(tmp, 3), neonCol(tmp, 4), neonCol(tmp, 5)
	sh := m.full["sqrtHalf"]
	// Subnormal (and ≤ 0) lanes: xs = x·2²³, k = −23.
	neonEach(k, func(j int) { m.dupLane(t0[j], "minNormal") })
	neonEach(k, func(j int) { f.v(FCMGT(t0[j], t0[j], x[j])) }) // x < 2⁻¹²⁶
	sc := m.lane["scale"]
	neonEach(k, func(j int) { f.v(FMULE(t1[j], x[j], sc.r, sc.i)) })
	neonEach(k, func(j int) { m.mov(t2[j], x[j]) })
	neonEach(k, func(j int) { f.v(BIT(t2[j], t1[j], t0[j])) }) // xs
	neonEach(k, func(j int) { m.dupLane(t1[j], "m23") })
	neonEach(k, func(j int) { f.v(AND(t1[j], t1[j], t0[j])) }) // −23 where scaled
	// e = (bits − bits(√½)) >> 23 (arithmetic) + k; m's bits = low 23 + bits(√½).
	neonEach(k, func(j int) { f.v(SUB(t2[j], t2[j], sh)) })
	neonEach(k, func(j int) { f.v(SSHR(t0[j], t2[j], 23)) })
	neonEach(k, func(j int) { f.v(SCVTF(t0[j], t0[j])) })
	neonEach(k, func(j int) { f.v(FADD(t0[j], t0[j], t1[j])) })
	e := t0
	neonEach(k, func(j int) { f.v(AND(t2[j], t2[j], m.full["mant"])) })
	neonEach(k, func(j int) { f.v(ADD(t2[j], t2[j], sh)) })
	neonEach(k, func(j int) { m.dupLane(t1[j], "one") })
	neonEach(k, func(j int) { f.v(FSUB(t2[j], t2[j], t1[j])) }) // f = m − 1, exact
	fr := t2
	p := m.horner(fr, t1, t3, []string{"l0", "l1", "l2", "l3", "l4", "l5", "l6", "l7"})
	q := t1 // the register of t1 and t3 that horner did not leave p in
	if p[0] == t1[0] {
		q = t3
	}
	neonEach(k, func(j int) { m.dupLane(q[j], "mhalf") })
	neonEach(k, func(j int) { f.v(FMLA(q[j], fr[j], p[j])) }) // t = −½ + f·P
	neonEach(k, func(j int) { f.v(FMUL(y[j], fr[j], fr[j])) })
	neonEach(k, func(j int) { f.v(FMUL(y[j], y[j], q[j])) }) // f²·t
	lo, ln2 := m.lane["ln2lo"], m.lane["ln2"]
	neonEach(k, func(j int) { f.v(FMLAE(y[j], e[j], lo.r, lo.i)) })   // + e·Ln2Lo32
	neonEach(k, func(j int) { f.v(FADD(y[j], fr[j], y[j])) })         // f + …
	neonEach(k, func(j int) { f.v(FMLAE(y[j], e[j], ln2.r, ln2.i)) }) // e·ln2 + …
	// Special values.
	neonEach(k, func(j int) { f.v(FCMGT(t5[j], m.full["inf"], x[j])) }) // x < +Inf: false for +Inf, NaN
	neonEach(k, func(j int) { f.v(BIF(y[j], x[j], t5[j])) })
	neonEach(k, func(j int) { f.v(EOR(t5[j], t5[j], t5[j])) })
	neonEach(k, func(j int) { f.v(FCMGT(t1[j], t5[j], x[j])) }) // x < 0
	neonEach(k, func(j int) { f.v(BIT(y[j], m.full["nan"], t1[j])) })
	neonEach(k, func(j int) { f.v(FCMEQ(t1[j], x[j], t5[j])) }) // x = ±0
	neonEach(k, func(j int) { f.v(BIT(y[j], m.full["ninf"], t1[j])) })
	return y
}
