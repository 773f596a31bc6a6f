package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/heedml/heed/internal/allocs"
)

// storedMatrix is one float32 matrix stored in one format, with what the
// decode tests need: the kernels on a row range, the stored values and the
// storage bound per element.
type storedMatrix struct {
	format     string
	rows, cols int
	orig       Matrix
	extra      int                      // roundings beyond a float32 product per term (Q8: the scale)
	val        func(r, c int) float64   // the stored value, exactly
	storeErr   func(r, c int) float64   // bound on |stored − original|
	matVec     func(dst, x []float32)   // all rows
	matTVec    func(dst, x []float32)   // all rows
	sub        func(lo, hi int) stepArg // rows [lo, hi)
}

// stepArg is a row range of a stored matrix for the streaming step.
type stepArg struct {
	bf Stored
	f  Stored
	q  Stored
}

// storeAll stores a in every format, each at element offset off into a larger
// slice and with pad elements (blocks for Q8) of padding between rows.
func storeAll(a Matrix, off, pad int) []storedMatrix {
	rows, cols := a.Rows, a.Cols
	stride := cols + pad
	bfData := make([]BF16, off+rows*stride)[off:]
	fData := make([]F16, off+rows*stride)[off:]
	for r := 0; r < rows && cols > 0; r++ {
		ToBF16(bfData[r*stride:r*stride+cols], a.Row(r))
		ToF16(fData[r*stride:r*stride+cols], a.Row(r))
	}
	nb := Q8Blocks(cols)
	qStride := nb + pad
	qData := make([]Q8Block, off+rows*qStride)[off:]
	for r := 0; r < rows && cols > 0; r++ {
		ToQ8(qData[r*qStride:r*qStride+nb], a.Row(r))
	}
	bf := StoredOf(rows, cols, stride, bfData)
	f := StoredOf(rows, cols, stride, fData)
	q := StoredOf(rows, cols, qStride, qData)
	orig := func(r, c int) float64 { return math.Abs(float64(a.Data[r*a.Stride+c])) }
	return []storedMatrix{
		{
			format: "bf16", rows: rows, cols: cols, orig: a,
			val:      func(r, c int) float64 { return float64(bfData[r*stride+c].Float32()) },
			storeErr: func(r, c int) float64 { return max(0x1p-8*orig(r, c), 0x1p-134) },
			matVec:   func(dst, x []float32) { MatVecStored(dst, bf, x) },
			matTVec:  func(dst, x []float32) { MatTVecStoredAdd(dst, bf, x) },
			sub: func(lo, hi int) stepArg {
				return stepArg{bf: StoredOf(hi-lo, cols, stride, bfData[min(lo*stride, len(bfData)):])}
			},
		},
		{
			format: "f16", rows: rows, cols: cols, orig: a,
			val:      func(r, c int) float64 { return float64(fData[r*stride+c].Float32()) },
			storeErr: func(r, c int) float64 { return max(0x1p-11*orig(r, c), 0x1p-25) },
			matVec:   func(dst, x []float32) { MatVecStored(dst, f, x) },
			matTVec:  func(dst, x []float32) { MatTVecStoredAdd(dst, f, x) },
			sub: func(lo, hi int) stepArg {
				return stepArg{f: StoredOf(hi-lo, cols, stride, fData[min(lo*stride, len(fData)):])}
			},
		},
		{
			format: "q8", rows: rows, cols: cols, orig: a, extra: 2,
			val: func(r, c int) float64 {
				blk := qData[r*qStride+c/32]
				return float64(blk.Scale) * float64(blk.Q[c%32])
			},
			storeErr: func(r, c int) float64 { return float64(qData[r*qStride+c/32].Scale) / 2 },
			matVec:   func(dst, x []float32) { MatVecStored(dst, q, x) },
			matTVec:  func(dst, x []float32) { MatTVecStoredAdd(dst, q, x) },
			sub: func(lo, hi int) stepArg {
				return stepArg{q: StoredOf(hi-lo, cols, qStride, qData[min(lo*qStride, len(qData)):])}
			},
		},
	}
}

// randMatrix returns a rows×cols float32 matrix of random mixed-sign values.
func randMatrix(rng *rand.Rand, rows, cols int) Matrix {
	a := Matrix{Rows: rows, Cols: cols, Stride: cols, Data: make([]float32, rows*cols)}
	fill(rng, a.Data)
	return a
}

var decodeCols = func() []int {
	var cs []int
	for c := 0; c <= 70; c++ {
		cs = append(cs, c)
	}
	return append(cs, 96, 127, 128, 129, 200, 256, 1000)
}()

var decodeRowCounts = []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 17}

func TestDecodeMatVec(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 8))
		for _, rows := range decodeRowCounts {
			for _, cols := range decodeCols {
				a := randMatrix(rng, rows, cols)
				x, xOK := slab(t, cols, rng.IntN(8))
				fill(rng, x)
				for _, m := range storeAll(a, rng.IntN(5), rng.IntN(3)) {
					dst, dstOK := slab(t, rows, rng.IntN(8))
					m.matVec(dst, x)
					dstOK()
					for r := range dst {
						exact, abs, orig, store := 0.0, 0.0, 0.0, 0.0
						for c := range x {
							p := m.val(r, c) * float64(x[c])
							exact += p
							abs += math.Abs(p)
							orig += float64(a.Data[r*cols+c]) * float64(x[c])
							store += m.storeErr(r, c) * math.Abs(float64(x[c]))
						}
						what := fmt.Sprintf("%s %d×%d row %d", m.format, rows, cols, r)
						bound := gamma(cols+m.extra)*abs + float64(cols)*eta
						if err := math.Abs(float64(dst[r]) - exact); !(err <= bound) {
							t.Fatalf("%s: %v, stored values give %v ± %.3g (error %.3g)", what, dst[r], exact, bound, err)
						}
						// Against the float32 matrix: plus the storage term.
						if err := math.Abs(float64(dst[r]) - orig); !(err <= bound+store) {
							t.Fatalf("%s: %v, float32 matrix gives %v ± %.3g (error %.3g)", what, dst[r], orig, bound+store, err)
						}
					}
				}
				xOK()
			}
		}
	})
}

func TestDecodeMatTVec(t *testing.T) { forEachQ8Form(t, testDecodeMatTVec) }

func testDecodeMatTVec(t *testing.T) {
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 10))
		for _, rows := range decodeRowCounts {
			for _, cols := range decodeCols {
				a := randMatrix(rng, rows, cols)
				x, xOK := slab(t, rows, rng.IntN(8))
				fill(rng, x)
				for _, m := range storeAll(a, rng.IntN(5), rng.IntN(3)) {
					dst, dstOK := slab(t, cols, rng.IntN(8))
					fill(rng, dst)
					dst0 := append([]float32(nil), dst...)
					m.matTVec(dst, x)
					dstOK()
					for c := range dst {
						exact, abs, orig, store := float64(dst0[c]), math.Abs(float64(dst0[c])), float64(dst0[c]), 0.0
						for r := range x {
							p := m.val(r, c) * float64(x[r])
							exact += p
							abs += math.Abs(p)
							orig += float64(a.Data[r*cols+c]) * float64(x[r])
							store += m.storeErr(r, c) * math.Abs(float64(x[r]))
						}
						what := fmt.Sprintf("%s %d×%d col %d", m.format, rows, cols, c)
						extra := 1
						if m.extra > 0 {
							extra = m.extra
						}
						bound := gamma(rows+extra)*abs + float64(rows)*eta
						if err := math.Abs(float64(dst[c]) - exact); !(err <= bound) {
							t.Fatalf("%s: %v, stored values give %v ± %.3g (error %.3g)", what, dst[c], exact, bound, err)
						}
						if err := math.Abs(float64(dst[c]) - orig); !(err <= bound+store) {
							t.Fatalf("%s: %v, float32 matrix gives %v ± %.3g (error %.3g)", what, dst[c], orig, bound+store, err)
						}
					}
				}
				xOK()
			}
		}
	})
}

// TestDecodeSpecial checks that NaN and ±Inf in the vector or a stored value
// reach the results as the fallback's, and that a Q8 block with a NaN scale
// gives NaN.
func TestDecodeSpecial(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, cols := range []int{1, 8, 16, 32, 33, 64, 100} {
		rows := 9
		a := randMatrix(rng, rows, cols)
		x := make([]float32, cols)
		fill(rng, x)
		for trial := 0; trial < 6; trial++ {
			xs := append([]float32(nil), x...)
			as := Matrix{rows, cols, cols, append([]float32(nil), a.Data...)}
			sp := specials[rng.IntN(3)] // NaN, +Inf, −Inf
			if trial%2 == 0 {
				xs[rng.IntN(cols)] = sp
			} else {
				as.Data[rng.IntN(len(as.Data))] = sp
			}
			want := map[string][]float32{}
			prev := Active()
			Use(Generic)
			for _, m := range storeAll(as, 0, 0) {
				d := make([]float32, rows)
				m.matVec(d, xs)
				want[m.format] = d
			}
			Use(prev)
			forEachISA(t, func(t *testing.T) {
				isa := Active()
				for _, m := range storeAll(as, 0, 0) {
					d := make([]float32, rows)
					m.matVec(d, xs)
					for r := range d {
						// Any NaN or Inf among the terms gives NaN or Inf; which
						// one may depend on the order (+Inf + −Inf).
						w := want[m.format][r]
						if isFinite(w) != isFinite(d[r]) || isFinite(w) && math.Abs(float64(w-d[r])) > 1e-3*(1+math.Abs(float64(w))) {
							t.Fatalf("%v %s cols=%d row %d: %v, fallback %v", isa, m.format, cols, r, d[r], w)
						}
					}
				}
			})
		}
	}
}

func TestDecodePanics(t *testing.T) {
	bf := StoredOf(2, 3, 3, make([]BF16, 6))
	q := StoredOf(2, 33, 2, make([]Q8Block, 4))
	st := SoftmaxState{Max: float32(math.Inf(-1))}
	buf := make([]float32, 8)
	for _, c := range []struct {
		want string
		f    func()
	}{
		{"heed/kernels: MatVecStored: a is 2×3 but len(dst)=1, len(x)=3", func() { MatVecStored(make([]float32, 1), bf, make([]float32, 3)) }},
		{"heed/kernels: MatVecStored: dst overlaps x", func() { MatVecStored(buf[:2], bf, buf[1:4]) }},
		{"heed/kernels: MatTVecStoredAdd: a is 2×33 but len(dst)=32, len(x)=2", func() { MatTVecStoredAdd(make([]float32, 32), q, make([]float32, 2)) }},
		{"heed/kernels: MatTVecStored: a is 2×33 but len(dst)=32, len(x)=2", func() { MatTVecStored(make([]float32, 32), q, make([]float32, 2)) }},
		{"heed/kernels: MatTVecStoredAdd: dst overlaps x", func() { MatTVecStoredAdd(buf[:3], bf, buf[2:4]) }},
		{"heed/kernels: StoredOf: data is 2×33 with stride 1 < 2", func() { StoredOf(2, 33, 1, make([]Q8Block, 4)) }},
		{"heed/kernels: StoredOf: data is 2×3 with stride 3: len(data)=5 < 6", func() { StoredOf(2, 3, 3, make([]F16, 5)) }},
		{"heed/kernels: StoredOf: data is -1×3: negative size", func() { StoredOf(-1, 3, 3, make([]BF16, 5)) }},
		{"heed/kernels: NewStored: Format(9) is not a Format", func() { NewStored(9, Matrix{}) }},
		{"heed/kernels: Stored.SliceRows: [1, 3) out of range [0, 2]", func() { bf.SliceRows(1, 3) }},
		{"heed/kernels: DotSoftmaxMatTVecStored: k is 2×3, v is 2×3 but len(scores)=2, len(h)=3, len(ctx)=2", func() {
			DotSoftmaxMatTVecStored(make([]float32, 2), make([]float32, 2), bf, bf, make([]float32, 3), &st)
		}},
		{"heed/kernels: DotSoftmaxMatTVecStored: k is bf16 but v is q8; want one format", func() {
			DotSoftmaxMatTVecStored(make([]float32, 33), make([]float32, 2), bf, q, make([]float32, 3), &st)
		}},
		{"heed/kernels: DotSoftmaxMatTVecStored: st is nil", func() {
			DotSoftmaxMatTVecStored(make([]float32, 3), make([]float32, 2), bf, bf, make([]float32, 3), nil)
		}},
		{"heed/kernels: DotSoftmaxMatTVecStored: ctx overlaps scores", func() {
			DotSoftmaxMatTVecStored(buf[:3], buf[2:4], bf, bf, make([]float32, 3), &st)
		}},
		{"heed/kernels: MatVecQ8Q8: a is bf16; want q8", func() { MatVecQ8Q8(make([]float32, 2), bf, make([]Q8Block, 1)) }},
		{"heed/kernels: DotSoftmaxMatTVecQ8Q8: k is bf16; want q8", func() {
			DotSoftmaxMatTVecQ8Q8(make([]float32, 3), make([]float32, 2), bf, bf, make([]Q8Block, 1), &st)
		}},
	} {
		mustPanic(t, c.want, c.f)
	}
}

// TestStored checks the views: StoredOf takes the format of its element
// type, SliceRows keeps the format and stride and selects the rows, and
// MatTVecStored overwrites where MatTVecStoredAdd adds.
func TestStored(t *testing.T) {
	a := Matrix{Rows: 5, Cols: 40, Stride: 40, Data: ramp(200)}
	for _, f := range []Format{FormatBF16, FormatF16, FormatQ8} {
		m := NewStored(f, a)
		if m.Format() != f || m.Rows() != 5 || m.Cols() != 40 {
			t.Fatalf("NewStored(%v): %v %d×%d", f, m.Format(), m.Rows(), m.Cols())
		}
		sub := m.SliceRows(2, 4)
		if sub.Format() != f || sub.Rows() != 2 || sub.Stride() != m.Stride() {
			t.Errorf("%v: SliceRows(2, 4) is %v %d×%d stride %d", f, sub.Format(), sub.Rows(), sub.Cols(), sub.Stride())
		}
		all, part := make([]float32, 5), make([]float32, 2)
		MatVecStored(all, m, a.Row(0))
		MatVecStored(part, sub, a.Row(0))
		// The same rows in another position of the kernel's blocks: the
		// same bound, not always the same bits.
		if math.Abs(float64(part[0]-all[2])) > 1e-5*40 || math.Abs(float64(part[1]-all[3])) > 1e-5*40 {
			t.Errorf("%v: rows 2, 3 of the slice give %v, of the whole %v", f, part, all[2:4])
		}
		if e := m.SliceRows(3, 3); e.Rows() != 0 {
			t.Errorf("%v: SliceRows(3, 3) has %d rows", f, e.Rows())
		}
		w := []float32{1, 0, 0, 0, 0}
		got, add := make([]float32, 40), make([]float32, 40)
		for i := range got {
			got[i], add[i] = 7, 7
		}
		MatTVecStored(got, m, w)
		MatTVecStoredAdd(add, m, w)
		for i := range got {
			if add[i] != got[i]+7 {
				t.Fatalf("%v: MatTVecStored %v, MatTVecStoredAdd on 7 %v at %d", f, got[i], add[i], i)
			}
		}
	}
	if got := StoredOf(1, 3, 3, make([]F16, 3)).Format(); got != FormatF16 {
		t.Errorf("StoredOf([]F16) is %v", got)
	}
	if got := FormatQ8.String() + Format(7).String(); got != "q8Format(7)" {
		t.Errorf("Format names: %q", got)
	}
}

// TestDecodeGuard places every operand of the decode kernels flush against a
// PROT_NONE page, below and above, for short shapes on every ISA (and each
// form of the Q8 context).
func TestDecodeGuard(t *testing.T) { forEachQ8Form(t, testDecodeGuard) }

func testDecodeGuard(t *testing.T) {
	const maxCols, maxRows = 70, 9
	gs := make([]*guard, 4)
	for i := range gs {
		gs[i] = newGuard(t, 36*maxRows*maxCols)
	}
	bytesAt := func(g *guard, n int, atEnd bool) unsafe.Pointer {
		if atEnd {
			return unsafe.Pointer(&g.mem[g.page+g.size-n])
		}
		return unsafe.Pointer(&g.mem[g.page])
	}
	forEachISA(t, func(t *testing.T) {
		for rows := 1; rows <= maxRows; rows++ {
			for cols := 1; cols <= maxCols; cols++ {
				for _, atEnd := range []bool{false, true} {
					n := rows * cols
					bf := unsafe.Slice((*BF16)(bytesAt(gs[0], 2*n, atEnd)), n)
					f := unsafe.Slice((*F16)(bytesAt(gs[0], 2*n, atEnd)), n)
					for i := range bf {
						bf[i] = BF16(0x3f80 + i%7)
					}
					nb := Q8Blocks(cols)
					q := unsafe.Slice((*Q8Block)(bytesAt(gs[1], 36*rows*nb, atEnd)), rows*nb)
					for i := range q {
						q[i] = Q8Block{Scale: 0.5, Q: [32]int8{1, -2, 3}}
					}
					x := gs[2].at(max(rows, cols), atEnd)
					d := gs[3].at(max(rows, cols), atEnd)
					xr, xc := x[len(x)-rows:], x[len(x)-cols:]
					dr, dc := d[len(d)-rows:], d[len(d)-cols:]
					if !atEnd {
						xr, xc, dr, dc = x[:rows], x[:cols], d[:rows], d[:cols]
					}
					for i := range x {
						x[i] = float32(i%5) - 2
					}
					MatVecStored(dr, StoredOf(rows, cols, cols, bf), xc)
					MatVecStored(dr, StoredOf(rows, cols, cols, f), xc)
					MatVecStored(dr, StoredOf(rows, cols, nb, q), xc)
					MatTVecStoredAdd(dc, StoredOf(rows, cols, cols, bf), xr)
					MatTVecStoredAdd(dc, StoredOf(rows, cols, cols, f), xr)
					MatTVecStoredAdd(dc, StoredOf(rows, cols, nb, q), xr)
				}
			}
		}
	})
}

// TestDecodeStepGuard runs the streaming step with keys, values, query,
// scores and context each ending (or starting) at a PROT_NONE page, over the
// shapes of the fused kernels and those around them, on every ISA.
func TestDecodeStepGuard(t *testing.T) { forEachStepKernel(t, testDecodeStepGuard) }

// forEachStepKernel runs f with the fused step's plain variant (in each form
// of the Q8 context, forEachQ8Form) and its prefetching variants into L1 and
// L2 forced, then with the two passes forced (decodeStepPasses, wherever keys
// and values are apart).
func forEachStepKernel(t *testing.T, f func(t *testing.T)) {
	defer func(k int) { decodeStepKernel = k }(decodeStepKernel)
	for _, k := range []struct {
		name string
		kind int
	}{{"near", stepNear}, {"pf", stepPF}, {"pfL2", stepPFL2}, {"passes", stepPasses}} {
		decodeStepKernel = k.kind
		if k.kind == stepNear {
			t.Run(k.name, func(t *testing.T) { forEachQ8Form(t, f) })
			continue
		}
		t.Run(k.name, f)
	}
}

func testDecodeStepGuard(t *testing.T) {
	const maxCols, maxRows = 72, 17
	gs := make([]*guard, 7)
	for i := range gs {
		gs[i] = newGuard(t, 36*maxRows*(maxCols/32+1))
	}
	bytesAt := func(g *guard, n int, atEnd bool) unsafe.Pointer {
		if atEnd {
			return unsafe.Pointer(&g.mem[g.page+g.size-n])
		}
		return unsafe.Pointer(&g.mem[g.page])
	}
	ninf := float32(math.Inf(-1))
	forEachISA(t, func(t *testing.T) {
		for _, rows := range []int{1, 7, 8, 9, 16, 17} {
			for _, kc := range []int{7, 8, 16, 24, 32, 64, 72} {
				for _, vc := range []int{8, 16, 32, 40, 64} {
					for _, atEnd := range []bool{false, true} {
						h := gs[4].at(kc, atEnd)
						scores := gs[5].at(rows, atEnd)
						ctx := gs[6].at(vc, atEnd)
						for i := range h {
							h[i] = float32(i%5-2) * 0.25
						}
						for _, format := range []string{"bf16", "f16", "q8"} {
							clear(ctx)
							st := SoftmaxState{Max: ninf}
							var ok bool
							switch format {
							case "q8":
								kb, vb := Q8Blocks(kc), Q8Blocks(vc)
								k := unsafe.Slice((*Q8Block)(bytesAt(gs[2], 36*rows*kb, atEnd)), rows*kb)
								v := unsafe.Slice((*Q8Block)(bytesAt(gs[3], 36*rows*vb, atEnd)), rows*vb)
								for i := range k {
									k[i] = Q8Block{Scale: 0.5, Q: [32]int8{1, -2, 3}}
								}
								for i := range v {
									v[i] = Q8Block{Scale: 0.25, Q: [32]int8{3, 2, 1}}
								}
								ok = DotSoftmaxMatTVecStored(ctx, scores, StoredOf(rows, kc, kb, k), StoredOf(rows, vc, vb, v), h, &st)
							default:
								k := unsafe.Slice((*uint16)(bytesAt(gs[0], 2*rows*kc, atEnd)), rows*kc)
								v := unsafe.Slice((*uint16)(bytesAt(gs[1], 2*rows*vc, atEnd)), rows*vc)
								for i := range k {
									k[i] = uint16(0x3f80 + i%7) // bf16 near 1; f16 near 1.9
								}
								for i := range v {
									v[i] = uint16(0x3c00 + i%5)
								}
								if format == "bf16" {
									ok = DotSoftmaxMatTVecStored(ctx, scores, StoredOf(rows, kc, kc, bf16s(k)), StoredOf(rows, vc, vc, bf16s(v)), h, &st)
								} else {
									ok = DotSoftmaxMatTVecStored(ctx, scores, StoredOf(rows, kc, kc, f16s(k)), StoredOf(rows, vc, vc, f16s(v)), h, &st)
								}
							}
							if !ok || !isFinite(st.Sum) || st.Sum < 1 {
								t.Fatalf("%s %d rows, %d/%d cols: ok %v, state %+v", format, rows, kc, vc, ok, st)
							}
						}
					}
				}
			}
		}
	})
}

// checkDecodeStep runs the streaming step over keys k and values v (the
// same matrix twice, or two) split at cuts, and checks it against a float64
// oracle on the stored values, with checkDotSoftmax's bound: the scores
// within the format's MatVec bound, st.Sum and ctx within γ_j + (|score−M| +
// D)·u per term, j counting the terms' roundings (two per exponential, three
// per rescaling, at most one per block and call, the values' product and the
// Q8 scale).
func checkDecodeStep(t *testing.T, what string, k, v storedMatrix, h []float32, cuts []int, st0 SoftmaxState, ctx0 []float32) {
	t.Helper()
	scores, ctx, st := make([]float32, k.rows), append([]float32(nil), ctx0...), st0
	for i := range scores {
		scores[i] = canary
	}
	// hv is the query the scores multiply: h, or for q8q8 its blocks hq.
	hv := func(c int) float64 { return float64(h[c]) }
	var hq []Q8Block
	if k.format == "q8q8" {
		hq = make([]Q8Block, Q8Blocks(len(h)))
		ToQ8(hq, h)
		hv = func(c int) float64 { return float64(hq[c/32].Scale) * float64(hq[c/32].Q[c%32]) }
	}
	ok, calls := true, 0
	for i := 0; i+1 < len(cuts) && ok; i++ {
		lo, hi := cuts[i], cuts[i+1]
		ka, va := k.sub(lo, hi), v.sub(lo, hi)
		switch k.format {
		case "bf16":
			ok = DotSoftmaxMatTVecStored(ctx, scores[lo:hi], ka.bf, va.bf, h, &st)
		case "f16":
			ok = DotSoftmaxMatTVecStored(ctx, scores[lo:hi], ka.f, va.f, h, &st)
		case "q8q8":
			ok = DotSoftmaxMatTVecQ8Q8(ctx, scores[lo:hi], ka.q, va.q, hq, &st)
		default:
			ok = DotSoftmaxMatTVecStored(ctx, scores[lo:hi], ka.q, va.q, h, &st)
		}
		calls++
	}
	if !ok {
		for _, s := range scores {
			if s != canary && !isFinite(s) {
				return
			}
		}
		t.Fatalf("%s: false with every score written finite", what)
	}
	M := float64(st0.Max)
	for r, s := range scores {
		exact, abs, exactH, query := 0.0, 0.0, 0.0, 0.0
		for c := range h {
			p := k.val(r, c) * hv(c)
			exact += p
			abs += math.Abs(p)
			exactH += k.val(r, c) * float64(h[c])
			if hq != nil {
				query += math.Abs(k.val(r, c)) * float64(hq[c/32].Scale) / 2
			}
		}
		bound := gamma(k.cols+k.extra)*abs + float64(k.cols)*eta
		if err := math.Abs(float64(s) - exact); !(err <= bound) {
			t.Fatalf("%s: score[%d] = %v, want %v ± %.3g (error %.3g)", what, r, s, exact, bound, err)
		}
		// Against the float32 query (q8q8: plus the query's rounding).
		if err := math.Abs(float64(s) - exactH); !(err <= bound+query) {
			t.Fatalf("%s: score[%d] = %v, float32 query gives %v ± %.3g (error %.3g)", what, r, s, exactH, bound+query, err)
		}
		M = max(M, float64(s))
	}
	if float64(st.Max) != M {
		t.Fatalf("%s: max %v, want %v", what, st.Max, M)
	}
	blocks := k.rows/8 + calls // at most one rescaling per step block of ≥ 8 rows and per call
	j := k.rows + 2 + v.extra + 2*k.rows + 3*blocks
	f0 := 1.0
	if float64(st0.Max) != M {
		f0 = math.Exp(float64(st0.Max) - M)
	}
	D, m0 := 0.0, isFinite(st0.Max)
	if m0 {
		D = M - float64(st0.Max)
	}
	for _, s := range scores {
		D = max(D, M-float64(s))
	}
	rel := func(x float64) float64 { return gamma(j) + (M-x+D)*u }
	w, wrel := make([]float64, k.rows), make([]float64, k.rows)
	sum, bound := f0*float64(st0.Sum), 0.0
	if m0 {
		bound = rel(float64(st0.Max)) * f0 * float64(st0.Sum)
	}
	for r, s := range scores {
		w[r] = math.Exp(float64(s) - M)
		wrel[r] = rel(float64(s))
		sum += w[r]
		bound += wrel[r] * w[r]
	}
	const tiny = 0x1p-126
	if err, bound := math.Abs(float64(st.Sum)-sum), bound+float64(j)*tiny; !(err <= bound) {
		t.Fatalf("%s: sum %v, want %v ± %.3g (error %.3g)", what, st.Sum, sum, bound, err)
	}
	for c := range ctx {
		want, bound := f0*float64(ctx0[c]), 0.0
		if m0 {
			bound = rel(float64(st0.Max)) * math.Abs(f0*float64(ctx0[c]))
		}
		for r := range w {
			val := v.val(r, c)
			want += w[r] * val
			bound += wrel[r]*math.Abs(w[r]*val) + tiny*math.Abs(val)
		}
		if err, bound := math.Abs(float64(ctx[c])-want), bound+float64(j)*eta; !(err <= bound) {
			t.Fatalf("%s: ctx[%d] = %v, want %v ± %.3g (error %.3g)", what, c, ctx[c], want, bound, err)
		}
	}
}

func TestDecodeStep(t *testing.T) { forEachStepKernel(t, testDecodeStep) }

func testDecodeStep(t *testing.T) {
	ninf := float32(math.Inf(-1))
	forEachISA(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(13, 14))
		rows := []int{1, 2, 7, 8, 9, 63, 64, 65, 200, 700}
		widths := []int{1, 7, 8, 9, 16, 31, 32, 33, 64, 80, 128, 256}
		if testing.Short() {
			// The emulated CI steps: 700 rows repeat what 200 cover (many
			// blocks of eight, a rising maximum, kernel plus Go tail rows),
			// and 256 columns what 128 cover (whole vectors, pairs, several
			// Q8 blocks).
			rows, widths = rows[:len(rows)-1], widths[:len(widths)-1]
		}
		for _, nr := range rows {
			for _, cols := range widths {
				for trial := 0; trial < 4; trial++ {
					a := randMatrix(rng, nr, cols)
					b := a
					if trial%2 == 1 { // separate values, of another width
						extra := rng.IntN(40)
						if trial == 1 { // whole 32-value blocks more: the fused kernels' shapes
							extra = 32 * rng.IntN(3)
						}
						b = randMatrix(rng, nr, cols+extra)
					}
					if trial == 2 { // scores rising: a new max every block
						for r := 0; r < nr; r++ {
							for c := range cols {
								a.Data[r*cols+c] *= float32(r+1) / float32(nr)
							}
						}
					}
					h := make([]float32, cols)
					fill(rng, h)
					ks, vs := storeAll(a, rng.IntN(3), rng.IntN(2)), storeAll(b, rng.IntN(3), rng.IntN(2))
					for f := range ks {
						ctx0 := make([]float32, b.Cols)
						st0 := SoftmaxState{Max: ninf}
						cuts := []int{0, nr}
						if trial == 3 {
							cuts = []int{0, rng.IntN(nr + 1), nr}
							fill(rng, ctx0)
							st0 = SoftmaxState{Max: float32(rng.NormFloat64() * 4), Sum: 1 + rng.Float32()}
						}
						what := fmt.Sprintf("%s %d×%d trial %d", ks[f].format, nr, cols, trial)
						checkDecodeStep(t, what, ks[f], vs[f], h, cuts, st0, ctx0)
						if ks[f].format == "q8" {
							kq := ks[f]
							kq.format = "q8q8"
							forEachIntDot(func(mode string) {
								checkDecodeStep(t, what+" q8q8 "+mode, kq, vs[f], h, cuts, st0, ctx0)
							})
						}
					}
				}
			}
		}
	})
}

// TestDecodeStepSpecial: a NaN or ±Inf score gives false.
func TestDecodeStepSpecial(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	forEachISA(t, func(t *testing.T) {
		for _, sp := range specials[:3] {
			a := randMatrix(rng, 40, 32)
			h := make([]float32, 32)
			fill(rng, h)
			h[5] = sp
			for _, m := range storeAll(a, 0, 0) {
				scores, ctx := make([]float32, 40), make([]float32, 32)
				st := SoftmaxState{Max: float32(math.Inf(-1))}
				arg := m.sub(0, 40)
				var ok bool
				switch m.format {
				case "bf16":
					ok = DotSoftmaxMatTVecStored(ctx, scores, arg.bf, arg.bf, h, &st)
				case "f16":
					ok = DotSoftmaxMatTVecStored(ctx, scores, arg.f, arg.f, h, &st)
				default:
					ok = DotSoftmaxMatTVecStored(ctx, scores, arg.q, arg.q, h, &st)
				}
				if ok {
					t.Fatalf("%s with h[5] = %v: true", m.format, sp)
				}
			}
		}
	})
}

// TestDecodeStepPassesSpecial runs the two passes (forced) over keys and
// values apart, in each 16-bit format: one NaN, +Inf or −Inf score among
// finite ones gives false; finite scores near MaxFloat32/10, whose sum
// overflows, give true, all weights 1 (st.Sum = rows) and a finite context.
func TestDecodeStepPassesSpecial(t *testing.T) {
	defer func(k int) { decodeStepKernel = k }(decodeStepKernel)
	decodeStepKernel = stepPasses
	const rows, cols = 40, 32
	rng := rand.New(rand.NewPCG(19, 20))
	vals := randMatrix(rng, rows, cols)
	forEachISA(t, func(t *testing.T) {
		for _, f := range []Format{FormatBF16, FormatF16} {
			v := NewStored(f, vals)
			for _, sp := range specials[:3] {
				for _, r := range []int{0, 17, rows - 1} {
					a := randMatrix(rng, rows, cols)
					a.Data[r*cols+3] = sp
					h := make([]float32, cols)
					fill(rng, h)
					h[3] = 1
					scores, ctx := make([]float32, rows), make([]float32, cols)
					st := SoftmaxState{Max: float32(math.Inf(-1))}
					if DotSoftmaxMatTVecStored(ctx, scores, NewStored(f, a), v, h, &st) {
						t.Fatalf("%v: key row %d holding %v: true", f, r, sp)
					}
				}
			}
			a := Matrix{Rows: rows, Cols: cols, Stride: cols, Data: make([]float32, rows*cols)}
			h := make([]float32, cols)
			for i := range a.Data {
				a.Data[i] = 1
			}
			for i := range h {
				h[i] = 1e38 / cols // every score 1e38: finite, their sum not
			}
			scores, ctx := make([]float32, rows), make([]float32, cols)
			st := SoftmaxState{Max: float32(math.Inf(-1))}
			if !DotSoftmaxMatTVecStored(ctx, scores, NewStored(f, a), v, h, &st) {
				t.Fatalf("%v: scores of 1e38: false", f)
			}
			if st.Sum != rows {
				t.Errorf("%v: scores of 1e38: st = %+v, want the sum %d", f, st, rows)
			}
			for c, x := range ctx {
				if x-x != 0 {
					t.Fatalf("%v: scores of 1e38: ctx[%d] = %v", f, c, x)
				}
			}
		}
	})
}

// TestDecodeStepPassesNoAllocs checks that the two passes (forced, keys and
// values apart, more rows than a block of the second pass) allocate nothing.
func TestDecodeStepPassesNoAllocs(t *testing.T) {
	defer func(k int) { decodeStepKernel = k }(decodeStepKernel)
	decodeStepKernel = stepPasses
	const rows, cols = 3*stepPassBlock + 5, 64
	rng := rand.New(rand.NewPCG(21, 22))
	a, b := randMatrix(rng, rows, cols), randMatrix(rng, rows, cols)
	h, ctx, scores := make([]float32, cols), make([]float32, cols), make([]float32, rows)
	fill(rng, h)
	forEachISA(t, func(t *testing.T) {
		for _, f := range []Format{FormatBF16, FormatF16, FormatQ8} {
			k, v := NewStored(f, a), NewStored(f, b)
			step := func() {
				st := SoftmaxState{Max: float32(math.Inf(-1))}
				DotSoftmaxMatTVecStored(ctx, scores, k, v, h, &st)
			}
			if n := allocs.Count(20, step); n != 0 {
				t.Errorf("%v: the two passes allocate %d times", f, n)
			}
		}
	})
}

func TestDecodeNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	a := randMatrix(rng, 300, 72)
	ms := storeAll(a, 0, 0)
	x, d, scores := make([]float32, 300), make([]float32, 300), make([]float32, 300)
	fill(rng, x)
	src := make([]float32, 100)
	h16 := make([]BF16, 100)
	f16 := make([]F16, 100)
	q := make([]Q8Block, 4)
	forEachISA(t, func(t *testing.T) {
		calls := map[string]func(){
			"ToBF16":   func() { ToBF16(h16, src) },
			"FromBF16": func() { FromBF16(src, h16) },
			"ToF16":    func() { ToF16(f16, src) },
			"FromF16":  func() { FromF16(src, f16) },
			"ToQ8":     func() { ToQ8(q, src) },
			"FromQ8":   func() { FromQ8(src, q) },
		}
		for _, m := range ms {
			m := m
			calls["MatVec/"+m.format] = func() { m.matVec(d[:300], x[:72]) }
			calls["MatTVec/"+m.format] = func() { m.matTVec(d[:72], x[:300]) }
			arg := m.sub(0, 300)
			calls["Step/"+m.format] = func() {
				st := SoftmaxState{Max: float32(math.Inf(-1))}
				switch m.format {
				case "bf16":
					DotSoftmaxMatTVecStored(d[:72], scores, arg.bf, arg.bf, x[:72], &st)
				case "f16":
					DotSoftmaxMatTVecStored(d[:72], scores, arg.f, arg.f, x[:72], &st)
				default:
					DotSoftmaxMatTVecStored(d[:72], scores, arg.q, arg.q, x[:72], &st)
				}
			}
		}
		for name, f := range calls {
			if n := allocs.Count(20, f); n != 0 {
				t.Errorf("%s: %d allocations", name, n)
			}
		}
	})
}
