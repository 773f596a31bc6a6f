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
// parallelism. Its constants live in vConst up (V23–V31): scalars four to a register,
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

// What a neonMath computes, which decides the constants it materialises.
const (
	neonExpFlush = iota // exp of arguments that are ≤ 0 or −Inf: only the flush to +0
	neonExp             // exp with every special value
	neonTanh            // tanh
	neonSigmoid         // sigmoid (neon_sigmoid.go)
	neonLog             // natural logarithm (neon_log.go)
)

// newNEONMath materialises the constants for kind.
func newNEONMath(f *neonFile, kind int) *neonMath { return newNEONMathAt(f, kind, vConst) }

// newNEONMathAt materialises the constants for kind in the registers from
// base up (the fused cells keep two neonMaths side by side).
func newNEONMathAt(f *neonFile, kind int, base Reg) *neonMath {
	m := &neonMath{f: f, lane: map[string]neonLane{}, full: map[string]Reg{}}
	type kv struct {
		name string
		v    float32
	}
	var lanes, full []kv
	if kind == neonTanh {
		lanes = []kv{{"log2e2", 2 * coef.Log2e}, {"ln2half", coef.Ln2 / 2}, {"half", 0.5},
			{"e1", coef.TanhE1}, {"e2", coef.TanhE2}, {"e3", coef.TanhE3}, {"e4", coef.TanhE4}}
		full = []kv{{"shifter", coef.TanhShifter}, {"one", 1}, {"two", 2}, {"sat", coef.TanhSat}}
	} else {
		lanes = []kv{{"log2e", coef.Log2e}, {"ln2hi", coef.Ln2Hi}, {"ln2lo", coef.Ln2Lo},
			{"e1", coef.Exp1}, {"e2", coef.Exp2}, {"e3", coef.Exp3}, {"e4", coef.Exp4}, {"e5", coef.Exp5}, {"e6", coef.Exp6}}
		full = []kv{{"shifter", coef.Shifter}, {"one", 1}, {"lo", coef.ExpLo}}
		if kind == neonExp {
			full = append(full, kv{"hi", coef.ExpHi}, kv{"inf", float32(math.Inf(1))})
		}
	}
	if kind == neonSigmoid {
		full = []kv{{"shifter", coef.Shifter}, {"one", 1}, {"thi", coef.SigmoidTHi},
			{"nclamp", -coef.SigmoidClamp}, {"lo", coef.SigmoidLo}}
	}
	if kind == neonLog {
		lanes = []kv{{"l0", coef.Log0}, {"l1", coef.Log1}, {"l2", coef.Log2}, {"l3", coef.Log3},
			{"l4", coef.Log4}, {"l5", coef.Log5}, {"l6", coef.Log6}, {"l7", coef.Log7},
			{"ln2", coef.Ln2}, {"ln2lo", coef.Ln2Lo32}, {"scale", 0x1p23}, {"m23", -23},
			{"minNormal", 0x1p-126}, {"mhalf", -0.5}, {"one", 1}}
		full = []kv{{"sqrtHalf", math.Float32frombits(coef.LogSqrtHalf)}, {"mant", math.Float32frombits(1<<23 - 1)},
			{"inf", float32(math.Inf(1))}, {"nan", math.Float32frombits(0x7fc00000)}, {"ninf", float32(math.Inf(-1))}}
	}
	m.kind = kind
	r := base
	for i, c := range lanes {
		ref := neonLane{r + Reg(i/4), uint(i % 4)}
		m.lane[c.name] = ref
		f.op("MOVW $0x%08x, R%d // %s = %v", math.Float32bits(c.v), neonScratch, c.name, c.v)
		f.v(INSW(ref.r, ref.i, neonScratch))
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
	m.f.v(DUPE(d, c.r, c.i))
}

// mov copies vector s to d.
func (m *neonMath) mov(d, s Reg) { m.f.v(MOV(d, s)) }

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
	neonEach(k, func(j int) { l := m.lane[c[last]]; f.v(FMLAE(a[j], z[j], l.r, l.i)) })
	p, q := a, b
	for i := last - 2; i >= 0; i-- {
		neonEach(k, func(j int) {
			if c[i] == "one" {
				m.mov(q[j], m.full["one"])
			} else {
				m.dupLane(q[j], c[i])
			}
		})
		neonEach(k, func(j int) { f.v(FMLA(q[j], p[j], z[j])) })
		p, q = q, p
	}
	return p
}

// expCore emits e^x for every x_j in [ExpLo, ExpHi) (other lanes get
// garbage), as fallback's expCore: n = round(x·log₂e) by the shifter,
// r = x − n·Ln2Hi − n·Ln2Lo, the degree-6 polynomial, 2ⁿ through the exponent
// bits. tmp[j] needs 4 registers; the result is in one of tmp[j][1:].
func (m *neonMath) expCore(x []Reg, tmp [][]Reg) []Reg {
	f, k := m.f, len(x)
	t, n, r, a := neonCol(tmp, 0), neonCol(tmp, 1), neonCol(tmp, 2), neonCol(tmp, 3)
	sh := m.full["shifter"]
	l2e, hi := m.lane["log2e"], m.lane["ln2hi"]
	neonEach(k, func(j int) { m.mov(t[j], sh) })
	neonEach(k, func(j int) { f.v(FMLAE(t[j], x[j], l2e.r, l2e.i)) }) // t = x·log₂e + shifter
	neonEach(k, func(j int) { f.v(FSUB(n[j], t[j], sh)) })            // n = round(x·log₂e)
	neonEach(k, func(j int) { m.mov(r[j], x[j]) })
	neonEach(k, func(j int) { f.v(FMLSE(r[j], n[j], hi.r, hi.i)) }) // r = x − n·Ln2Hi, exact
	lo := m.lane["ln2lo"]
	neonEach(k, func(j int) { f.v(FMLSE(r[j], n[j], lo.r, lo.i)) }) // r −= n·Ln2Lo
	poly := []string{"one", "e1", "e2", "e3", "e4", "e5", "e6"}
	// The polynomial alternates between a and n's register.
	p := m.horner(r, a, n, poly)
	neonEach(k, func(j int) { f.v(SHL(t[j], t[j], 23)) })
	neonEach(k, func(j int) { f.v(ADD(p[j], p[j], t[j])) }) // p·2ⁿ through the exponent bits
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
	neonEach(k, func(j int) { f.v(FCMGE(mask[j], x[j], m.full["lo"])) }) // false on NaN
	neonEach(k, func(j int) { f.v(AND(p[j], p[j], mask[j])) })
	if !specials {
		return p
	}
	neonEach(k, func(j int) { f.v(FCMGE(mask[j], x[j], m.full["hi"])) })
	neonEach(k, func(j int) { f.v(BIT(p[j], m.full["inf"], mask[j])) })
	neonEach(k, func(j int) { f.v(FCMEQ(mask[j], x[j], x[j])) })
	neonEach(k, func(j int) { f.v(BIF(p[j], x[j], mask[j])) }) // NaN: x itself
	return p
}

// tanh emits tanh(x_j) as fallback.Tanh, operation for operation: on
// a = |x| clamped to TanhSat (FMIN keeps NaN), E/(E+2) with
// E = expm1(2a) = 2ⁿ⁺¹·h + 2ⁿ − 1, n = round(2a·log₂e) by TanhShifter,
// r = a − n·ln2/2, h = r + r²·(1 + r·(E1 + … + r·E4)); then the sign of x put
// back. x is not modified; tmp[j] needs 6 registers.
func (m *neonMath) tanh(x []Reg, tmp [][]Reg) []Reg {
	f, k := m.f, len(x)
	sign, r, t, n := neonCol(tmp, 0), neonCol(tmp, 1), neonCol(tmp, 2), neonCol(tmp, 3)
	r2 := neonCol(tmp, 5)
	sh, one, two := m.full["shifter"], m.full["one"], m.full["two"]
	l2e, c, half := m.lane["log2e2"], m.lane["ln2half"], m.lane["half"]
	neonEach(k, func(j int) { f.v(FABS(sign[j], x[j])) })
	neonEach(k, func(j int) { f.v(FMIN(r[j], sign[j], m.full["sat"])) })
	neonEach(k, func(j int) { f.v(EOR(sign[j], x[j], sign[j])) }) // x's sign bit
	neonEach(k, func(j int) { m.mov(t[j], sh) })
	neonEach(k, func(j int) { f.v(FMLAE(t[j], r[j], l2e.r, l2e.i)) }) // n + 128 in the low bits
	neonEach(k, func(j int) { f.v(FSUB(n[j], t[j], sh)) })
	neonEach(k, func(j int) { f.v(FMLSE(r[j], n[j], c.r, c.i)) }) // r = a − n·ln2/2
	q := m.horner(r, n, neonCol(tmp, 4), []string{"one", "e1", "e2", "e3", "e4"})
	neonEach(k, func(j int) { f.v(FMUL(r2[j], r[j], r[j])) })
	neonEach(k, func(j int) { f.v(FMLA(r[j], r2[j], q[j])) }) // h = r + r²·q
	h, e := r, r2
	neonEach(k, func(j int) { f.v(SHL(t[j], t[j], 23)) }) // 2ⁿ⁺¹
	neonEach(k, func(j int) { f.v(FMULE(e[j], t[j], half.r, half.i)) })
	neonEach(k, func(j int) { f.v(FSUB(e[j], e[j], one)) })  // 2ⁿ − 1 (one rounding, as fallback's FMA)
	neonEach(k, func(j int) { f.v(FMLA(e[j], t[j], h[j])) }) // E = 2ⁿ⁺¹·h + 2ⁿ − 1
	neonEach(k, func(j int) { f.v(FADD(q[j], e[j], two)) })  // E + 2
	neonEach(k, func(j int) { f.v(FDIV(e[j], e[j], q[j])) })
	neonEach(k, func(j int) { f.v(ORR(e[j], e[j], sign[j])) })
	return e
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
	x := neonSeq(vIn, 2) // the inputs, below neonMathTmp's temporaries
	f.countLoop(name+"8", "R2", "R11", 3, func() {
		f.op("VLD1.P 32(R0), %s", neonList(x[0], 2))
		res := apply(m, x, tmp(2))
		f.op("VST1.P [%s], 16(R1)", neonVec(res[0]))
		f.op("VST1.P [%s], 16(R1)", neonVec(res[1]))
	})
	f.op("TBZ $2, R2, %s4Done", name)
	f.op("VLD1.P 16(R0), %s", neonList(x[0], 1))
	res := apply(m, x[:1], tmp(1))
	f.op("VST1.P [%s], 16(R1)", neonVec(res[0]))
	f.label(name + "4Done")
	f.op("AND $3, R2, R2")
	f.tailLoop(name+"1", "R2", func() {
		f.op("FMOVS.P 4(R0), F%d", x[0])
		res := apply(m, x[:1], tmp(1))
		f.op("FMOVS.P F%d, 4(R1)", res[0])
	})
	f.op("RET")
}
