package main

import (
	"math"

	"github.com/heedml/heed/internal/coef"

	. "github.com/heedml/heed/asmgen/arm64"
)

func init() {
	registerNEON("exp", func(f *neonFile) {
		genElementwiseNEON(f, "expNEON", "e^x[i]", func() *neonMath { return newNEONMath(f, neonExp) },
			func(m *neonMath, x []Reg, tmp [][]Reg) []Reg { return m.exp(x, tmp, true) })
		genElementwiseNEON(f, "tanhNEON", "tanh(x[i])", func() *neonMath { return newNEONMath(f, neonTanh) },
			func(m *neonMath, x []Reg, tmp [][]Reg) []Reg { return m.tanh(x, tmp) })
	})
}

// neonMath emits the lane-wise exp and tanh of fallback.Exp and fallback.Tanh
// (the algorithm and the constants of internal/coef, FMA where fallback's Go
// fuses on arm64) on k vectors at once, interleaved for instruction-level
// parallelism. Its constants live in V23–V31: scalars four to a register,
// used through by-element FMLA/FMLS and DUP; compare operands and the like as
// whole vectors.
type neonMath struct {
	f    *neonFile
	kind int
	lane map[string]neonLane
	full map[string]Reg
}

type neonLane struct {
	r Reg
	i uint
}

// neonConstBase is the first register neonMath's constants occupy.
const neonConstBase = 23

// What a neonMath computes, which decides the constants it materialises.
const (
	neonExpFlush = iota // exp of arguments that are ≤ 0 or −Inf: only the flush to +0
	neonExp             // exp with every special value
	neonTanh            // tanh
)

// newNEONMath materialises the constants for kind.
func newNEONMath(f *neonFile, kind int) *neonMath {
	m := &neonMath{f: f, lane: map[string]neonLane{}, full: map[string]Reg{}}
	type kv struct {
		name string
		v    float32
	}
	var lanes, full []kv
	if kind == neonTanh {
		// tanh's e²ᵃ: 2a reduced by ln2 alone, its degree-5 polynomial in
		// r/2 (the products by powers of two are exact, as in fallback).
		lanes = []kv{{"t1", coef.Tanh1}, {"t2", coef.Tanh2}, {"t3", coef.Tanh3}, {"t4", coef.Tanh4}, {"t5", coef.Tanh5},
			{"log2e", 2 * coef.Log2e}, {"ln2hi", coef.Ln2 / 2},
			{"e1", 2 * coef.TExp1}, {"e2", 4 * coef.TExp2}, {"e3", 8 * coef.TExp3}, {"e4", 16 * coef.TExp4}, {"e5", 32 * coef.TExp5}}
		full = []kv{{"shifter", coef.Shifter}, {"one", 1}, {"two", 2}, {"small", coef.TanhSmall}, {"sat", coef.TanhSat}}
	} else {
		lanes = []kv{{"log2e", coef.Log2e}, {"ln2hi", coef.Ln2Hi}, {"ln2lo", coef.Ln2Lo},
			{"e1", coef.Exp1}, {"e2", coef.Exp2}, {"e3", coef.Exp3}, {"e4", coef.Exp4}, {"e5", coef.Exp5}, {"e6", coef.Exp6}}
		full = []kv{{"shifter", coef.Shifter}, {"one", 1}, {"lo", coef.ExpLo}}
		if kind == neonExp {
			full = append(full, kv{"hi", coef.ExpHi}, kv{"inf", float32(math.Inf(1))})
		}
	}
	m.kind = kind
	r := Reg(neonConstBase)
	for i, c := range lanes {
		ref := neonLane{r + Reg(i/4), uint(i % 4)}
		m.lane[c.name] = ref
		f.op("MOVW $0x%08x, R27 // %s = %v", math.Float32bits(c.v), c.name, c.v)
		f.op("VMOV R27, V%d.S[%d]", ref.r, ref.i)
	}
	r += Reg((len(lanes) + 3) / 4)
	for _, c := range full {
		m.full[c.name] = r
		f.dupConst(r, math.Float32bits(c.v), c.name)
		r++
	}
	if r > 32 {
		panic("neonMath: too many constants")
	}
	return m
}

// dupLane sets every lane of d to the scalar constant name.
func (m *neonMath) dupLane(d Reg, name string) {
	c := m.lane[name]
	m.f.op("VDUP V%d.S[%d], %s", c.r, c.i, neonVec(d))
}

// mov copies vector s to d.
func (m *neonMath) mov(d, s Reg) { m.f.op("VMOV V%d.B16, V%d.B16", s, d) }

// each runs op for every vector j.
func neonEach(k int, op func(j int)) {
	for j := 0; j < k; j++ {
		op(j)
	}
}

// horner emits, for each vector j, P(z_j) = c[0] + z·(c[1] + z·(… + z·c[len−1]))
// with FMAs (c names scalar constants; "one" the full vector 1), using the
// registers a_j and b_j, and returns the register holding each result.
func (m *neonMath) horner(z, a, b []Reg, c []string) []Reg {
	f, k := m.f, len(z)
	last := len(c) - 1
	neonEach(k, func(j int) { m.dupLane(a[j], c[last-1]) })
	neonEach(k, func(j int) { l := m.lane[c[last]]; f.w(FMLAE(a[j], z[j], l.r, l.i)) })
	p, q := a, b
	for i := last - 2; i >= 0; i-- {
		neonEach(k, func(j int) {
			if c[i] == "one" {
				m.mov(q[j], m.full["one"])
			} else {
				m.dupLane(q[j], c[i])
			}
		})
		neonEach(k, func(j int) { f.fmla(q[j], p[j], z[j]) })
		p, q = q, p
	}
	return p
}

// expCore emits e^x for every x_j in [ExpLo, ExpHi) (other lanes get
// garbage), as fallback's expCore: n = round(x·log₂e) by the shifter,
// r = x − n·Ln2Hi − n·Ln2Lo, the degree-6 polynomial, 2ⁿ through the exponent
// bits. For a neonTanh it is fallback's exp2a instead: x·2log₂e, r = x − n·ln2/2
// and the degree-5 polynomial (its constants pre-scaled). tmp[j] needs 4
// registers; the result is in one of tmp[j][1:].
func (m *neonMath) expCore(x []Reg, tmp [][]Reg) []Reg {
	f, k := m.f, len(x)
	t, n, r, a := neonCol(tmp, 0), neonCol(tmp, 1), neonCol(tmp, 2), neonCol(tmp, 3)
	sh := m.full["shifter"]
	l2e, hi := m.lane["log2e"], m.lane["ln2hi"]
	neonEach(k, func(j int) { m.mov(t[j], sh) })
	neonEach(k, func(j int) { f.w(FMLAE(t[j], x[j], l2e.r, l2e.i)) }) // t = x·log₂e + shifter
	neonEach(k, func(j int) { f.w(FSUB(n[j], t[j], sh)) })            // n = round(x·log₂e)
	neonEach(k, func(j int) { m.mov(r[j], x[j]) })
	neonEach(k, func(j int) { f.w(FMLSE(r[j], n[j], hi.r, hi.i)) }) // r = x − n·Ln2Hi, exact
	poly := []string{"one", "e1", "e2", "e3", "e4", "e5"}
	if m.kind != neonTanh {
		lo := m.lane["ln2lo"]
		neonEach(k, func(j int) { f.w(FMLSE(r[j], n[j], lo.r, lo.i)) }) // r −= n·Ln2Lo
		poly = append(poly, "e6")
	}
	// The polynomial alternates between a and n's register.
	p := m.horner(r, a, n, poly)
	neonEach(k, func(j int) { f.w(SHL(t[j], t[j], 23)) })
	neonEach(k, func(j int) { f.w(ADD(p[j], p[j], t[j])) }) // p·2ⁿ through the exponent bits
	return p
}

// col returns register i of every vector's temporaries.
func neonCol(tmp [][]Reg, i int) []Reg {
	c := make([]Reg, len(tmp))
	for j := range tmp {
		c[j] = tmp[j][i]
	}
	return c
}

// exp emits e^x_j; with specials (a neonExp), x < ExpLo gives +0, x ≥ ExpHi
// +Inf and NaN stays NaN (fallback.Exp); without, the caller guarantees every
// x_j is below ExpHi and not NaN, and only the flush to +0 below ExpLo is
// applied. tmp[j] needs 4 registers.
func (m *neonMath) exp(x []Reg, tmp [][]Reg, specials bool) []Reg {
	f, k := m.f, len(x)
	p := m.expCore(x, tmp)
	mask := neonCol(tmp, 0)
	neonEach(k, func(j int) { f.w(FCMGE(mask[j], x[j], m.full["lo"])) }) // false on NaN
	neonEach(k, func(j int) { f.w(AND(p[j], p[j], mask[j])) })
	if !specials {
		return p
	}
	neonEach(k, func(j int) { f.w(FCMGE(mask[j], x[j], m.full["hi"])) })
	neonEach(k, func(j int) { f.w(BIT(p[j], m.full["inf"], mask[j])) })
	neonEach(k, func(j int) { f.w(FCMEQ(mask[j], x[j], x[j])) })
	neonEach(k, func(j int) { f.w(BIF(p[j], x[j], mask[j])) }) // NaN: x itself
	return p
}

// tanh emits tanh(x_j) as fallback.Tanh: with a = |x|, a + a·u·P(u), u = a²,
// for a < TanhSmall (and NaN, which stays NaN through it); else
// 1 − 2/(e²ᵃ+1) with a clamped to TanhSat, where it is exactly 1; then the
// sign of x put back. tmp[j] needs 6 registers.
func (m *neonMath) tanh(x []Reg, tmp [][]Reg) []Reg {
	f, k := m.f, len(x)
	a, u, y := neonCol(tmp, 0), neonCol(tmp, 1), neonCol(tmp, 2)
	neonEach(k, func(j int) { f.w(FABS(a[j], x[j])) })
	neonEach(k, func(j int) { f.w(FMUL(u[j], a[j], a[j])) })
	p := m.horner(u, neonCol(tmp, 3), neonCol(tmp, 4), []string{"t1", "t2", "t3", "t4", "t5"})
	neonEach(k, func(j int) { f.w(FMUL(u[j], a[j], u[j])) }) // a·u
	neonEach(k, func(j int) { m.mov(y[j], a[j]) })
	neonEach(k, func(j int) { f.fmla(y[j], u[j], p[j]) }) // y = a + (a·u)·P
	// 1 − 2/(e²ᵃ + 1) on min(a, TanhSat), in registers 1 and 3–5.
	c := u
	one, two := m.full["one"], m.full["two"]
	neonEach(k, func(j int) { f.w(FMIN(c[j], a[j], m.full["sat"])) })
	etmp := make([][]Reg, k)
	for j := range etmp {
		etmp[j] = []Reg{tmp[j][3], tmp[j][4], tmp[j][5], tmp[j][1]}
	}
	e := m.expCore(c, etmp)
	neonEach(k, func(j int) { f.w(FADD(e[j], e[j], one)) })
	neonEach(k, func(j int) { f.w(FDIV(e[j], two, e[j])) })
	neonEach(k, func(j int) { f.w(FSUB(e[j], one, e[j])) })
	// expCore's t is free again.
	mask := neonCol(tmp, 3)
	neonEach(k, func(j int) { f.w(FCMGE(mask[j], a[j], m.full["small"])) }) // false on NaN
	neonEach(k, func(j int) { f.w(BIT(y[j], e[j], mask[j])) })
	neonEach(k, func(j int) { f.w(EOR(mask[j], x[j], a[j])) }) // the sign bit of x
	neonEach(k, func(j int) { f.w(ORR(y[j], y[j], mask[j])) })
	return y
}

// genElementwiseNEON emits name(dst, x []float32), dst[i] = what for
// i < len(x): two vectors per iteration, then one, then one element at a time
// in lane 0 (FMOVS zeroes the other lanes). dst may be x: every element is
// loaded before its own store.
func genElementwiseNEON(f *neonFile, name, what string, setup func() *neonMath,
	apply func(m *neonMath, x []Reg, tmp [][]Reg) []Reg) {
	f.text(name, "(dst []float32, x []float32)", "$0-48",
		"sets dst[i] = "+what+" for i < len(x); len(dst) ≥ len(x), dst may be x.")
	f.op("MOVD dst_base+0(FP), R1")
	f.op("MOVD x_base+24(FP), R0")
	f.op("MOVD x_len+32(FP), R2")
	m := setup()
	tmp := neonMathTmp
	f.countLoop(name+"8", "R2", "R11", 3, func() {
		f.op("VLD1.P 32(R0), %s", neonList(0, 2))
		res := apply(m, []Reg{0, 1}, tmp(2))
		f.op("VST1.P [%s], 16(R1)", neonVec(res[0]))
		f.op("VST1.P [%s], 16(R1)", neonVec(res[1]))
	})
	f.op("TBZ $2, R2, %s4Done", name)
	f.op("VLD1.P 16(R0), %s", neonList(0, 1))
	res := apply(m, []Reg{0}, tmp(1))
	f.op("VST1.P [%s], 16(R1)", neonVec(res[0]))
	f.label(name + "4Done")
	f.op("AND $3, R2, R2")
	f.tailLoop(name+"1", "R2", func() {
		f.op("FMOVS.P 4(R0), F0")
		res := apply(m, []Reg{0}, tmp(1))
		f.op("FMOVS.P F%d, 4(R1)", res[0])
	})
	f.op("RET")
}
