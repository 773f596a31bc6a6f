package kernels

import (
	"math"
	"unsafe"

	"github.com/heedml/heed/internal/fallback"
)

// CrossEntropyOptions configures [SoftmaxCrossEntropy] and
// [SoftmaxCrossEntropyRows]. The zero value is the plain loss, every row
// counted, with the gradient of the mean over the rows (PyTorch's
// cross_entropy with its defaults, ignore_index aside).
type CrossEntropyOptions struct {
	// Ignore, when negative, is the target that marks a padding row: a row
	// whose target equals it adds no loss, is not counted, and gets a zero
	// gradient, whatever its logits. PyTorch marks padding with −100. A
	// non-negative Ignore (the zero value among them) marks nothing, so every
	// target must then be a class in [0, V).
	Ignore int32
	// Smoothing is label smoothing's ε ∈ [0, 1]: the target distribution of
	// a row with target t is q = (1−ε)·onehot(t) + ε/V over its V classes.
	Smoothing float32
	// Scale multiplies the gradient: 1/N for the mean over N rows, 1 for the
	// sum. 0 stands for 1/counted, the mean over the rows the call counts (1
	// for SoftmaxCrossEntropy). The loss returned is not scaled.
	Scale float32
}

// SoftmaxCrossEntropy is the cross-entropy (negative log-likelihood) of one
// row of V = len(logits) logits x against the class target, forward and
// backward fused: with p = softmax(x) and q the target distribution (onehot
// of target, smoothed by o.Smoothing = ε), it returns the loss
//
//	−Σⱼ qⱼ·ln pⱼ = (1−ε)·(m + ln Σ − x_t) + ε·(ln Σ + Σⱼ(m − xⱼ)/V),
//
// m = max x, Σ = Σⱼ e^(xⱼ−m), and sets dlogits[j] = s·(pⱼ − qⱼ), its
// gradient scaled by s = o.Scale (0 stands for 1). A target equal to a
// negative o.Ignore is padding: dlogits is zeroed and the loss is 0.
//
// The pass structure is Softmax's: m by Max; then eⱼ = e^(xⱼ−m) written to
// dlogits and summed, with Σ(xⱼ − m); then, in place,
// dlogits[j] = fma(eⱼ, c, −s·ε/V) with c = s/Σ rounded once (fused, one
// rounding), and dlogits[t] = eₜ·c − s·q_t rounded once from float64. The loss
// is assembled in float64 from m, x_t, ln Σ (math.Log of the float32 sum)
// and the float32 Σ(xⱼ − m).
//
// Error bounds (u = 2⁻²⁴, n = V ≤ 2¹⁹; first-order terms, inflated to cover
// the rest): the computed Σ is within δ = (1.5·n + 4)·u relative of the exact
// one: the n−1 additions (γₙ₋₁), Exp's 2 ULP (4u) and the rounding of each
// xⱼ − m, which moves eⱼ by |xⱼ − m|·u relative and the sum by at most
// n·u/e, as t·e⁻ᵗ ≤ 1/e; terms below 2⁻¹²⁶ flush to zero, which Σ ≥ 1 absorbs.
// So ln Σ, and the loss, are within δ/(1−δ) absolute, plus, with smoothing,
// ε·(n+1)·u·Σⱼ(m − xⱼ)/V for the sum of the differences (terms of one sign),
// plus 2⁻⁵⁰·(|m − x_t| + ln n) for the float64 assembly. Each gradient
// element is within
//
//	|s|·((pⱼ·(|xⱼ − m| + 1.5·n + 9) + qⱼ)·u + 2⁻¹²⁶) + u·|dlogits[j]|
//
// of s·(pⱼ − qⱼ): pⱼ·s carries Softmax's relative error (eⱼ's, Σ's and c's
// rounding), s·ε/V and the result round once each.
//
// Special values: a NaN logit makes the loss NaN and every dlogits element
// the default quiet NaN. +Inf logits follow Softmax's rule, the k of them
// sharing p = 1/k: the loss is the limit, (1−ε)·ln k when x_t = +Inf
// (+Inf when it is not), plus ε·ln k when every logit is +Inf (+Inf
// otherwise, for ε > 0). A row of −Inf logits (fully masked) has Softmax's
// zeros: dlogits = −s·q and the loss is +Inf. A −Inf target logit in a row
// with a finite maximum gives +Inf (p_t = 0), and with ε > 0 so does any −Inf
// logit, or a difference xⱼ − m or Σ(xⱼ − m) that overflows float32. The
// float32 loss is +Inf where the float64 one exceeds MaxFloat32.
//
// dlogits may be logits (in place); it panics, before any work, if
// len(dlogits) != len(logits), if they otherwise overlap, if the target is
// not padding and not in [0, V), or if ε is not in [0, 1]. It does not
// allocate and is safe for concurrent use on disjoint dlogits.
func SoftmaxCrossEntropy(dlogits, logits []float32, target int, o CrossEntropyOptions) (loss float32) {
	const name = "SoftmaxCrossEntropy"
	checkSameLen(name, "dlogits", "logits", len(dlogits), len(logits))
	if shifted(dlogits, logits) {
		panic(aliasError{name, "dlogits", "logits", true})
	}
	o.check(name)
	if o.ignores(target) {
		clear(dlogits)
		return 0
	}
	if target < 0 || target >= len(logits) {
		panicf("%s: target %d out of range [0, %d)", name, target, len(logits))
	}
	s := o.Scale
	if s == 0 {
		s = 1
	}
	return float32(crossEntropyRow(dlogits, logits, target, o.Smoothing, s))
}

// SoftmaxCrossEntropyRows is [SoftmaxCrossEntropy] on each row i of logits
// against targets[i], the gradient in row i of dlogits: it returns the sum of
// the rows' losses and counted, the number of rows not marked as padding by
// o.Ignore, so that the caller can average. o.Scale = 0 scales every row's
// gradient by 1/counted (rounded to float32), the gradient of the mean.
//
// Each row's loss and gradient are SoftmaxCrossEntropy's, bit for bit, with
// the same scale; the sum adds the rows' float64 losses in order and rounds
// once, so it is within the sum of their bounds plus
// (u + rows·2⁻⁵³)·Σᵢ|lossᵢ|.
//
// For an output layer logits = H·Wᵀ + b (H the n×d hidden states, W the V×d
// projection), the rest of the backward is three products on dL = dlogits:
// dW += dLᵀ·H is Gemm(Trans, NoTrans, 1, dL, H, 1, dW), dH = dL·W is
// Gemm(NoTrans, NoTrans, 1, dL, W, 0, dH), and db += dLᵀ·1 is
// MatTVecAdd(db, dL, ones); padding rows, whose dL is zero, add nothing to
// them. Each carries dL's bound through Gemm's (see the example).
//
// dlogits may be logits (the same Data and Stride); it panics, before any
// work, naming the sizes, if either is not a valid Matrix, if their shapes
// differ, if len(targets) != logits.Rows, if they otherwise overlap, if ε is
// not in [0, 1], or naming the row, if a target is not padding and not in
// [0, logits.Cols). It does not allocate and is safe for concurrent use on
// disjoint dlogits.
func SoftmaxCrossEntropyRows(dlogits, logits Matrix, targets []int32, o CrossEntropyOptions) (loss float32, counted int) {
	const name = "SoftmaxCrossEntropyRows"
	logits.check(name, "logits")
	dlogits.check(name, "dlogits")
	if dlogits.Rows != logits.Rows || dlogits.Cols != logits.Cols {
		panicf("%s: dlogits is %d×%d, logits %d×%d", name, dlogits.Rows, dlogits.Cols, logits.Rows, logits.Cols)
	}
	if len(targets) != logits.Rows {
		panicf("%s: len(targets)=%d != logits.Rows=%d", name, len(targets), logits.Rows)
	}
	same := unsafe.SliceData(dlogits.Data) == unsafe.SliceData(logits.Data) &&
		(dlogits.Stride == logits.Stride || logits.Rows <= 1)
	if !same && overlaps(dlogits.span(), logits.span()) {
		panic(aliasError{name, "dlogits", "logits", true})
	}
	o.check(name)
	for i, t := range targets {
		if o.ignores(int(t)) {
			continue
		}
		if t < 0 || int(t) >= logits.Cols {
			panicf("%s: targets[%d]=%d out of range [0, %d)", name, i, t, logits.Cols)
		}
		counted++
	}
	s := o.Scale
	if s == 0 && counted > 0 {
		s = 1 / float32(counted)
	}
	var total float64
	if logits.Cols == 0 {
		return 0, counted // every row is padding
	}
	for i, t := range targets {
		d := dlogits.Data[i*dlogits.Stride : i*dlogits.Stride+dlogits.Cols]
		if o.ignores(int(t)) {
			clear(d)
			continue
		}
		x := logits.Data[i*logits.Stride : i*logits.Stride+logits.Cols]
		total += crossEntropyRow(d, x, int(t), o.Smoothing, s)
	}
	return float32(total), counted
}

// check panics unless o is valid.
func (o CrossEntropyOptions) check(kernel string) {
	if !(o.Smoothing >= 0 && o.Smoothing <= 1) {
		panicf("%s: Smoothing=%v not in [0, 1]", kernel, o.Smoothing)
	}
}

// ignores reports whether target marks a padding row.
func (o CrossEntropyOptions) ignores(target int) bool {
	return o.Ignore < 0 && target == int(o.Ignore)
}

// crossEntropyRow is SoftmaxCrossEntropy's loss and gradient on one row, for
// a target in range and the scale s resolved; it returns the loss in float64.
func crossEntropyRow(d, x []float32, t int, eps, s float32) float64 {
	xt := x[t] // before an in-place d overwrites it
	m := maxOf(x)
	if m-m != 0 { // ±Inf or NaN
		return crossEntropySpecial(d, x, t, eps, s, m)
	}
	e, v := float64(eps), float64(len(x))
	sum, dsum, et := crossEntropyExp(d, x, t, m, s, float32(float64(s)*e/v))
	c := s / sum
	d[t] = float32(float64(et)*float64(c) - float64(s)*((1-e)+e/v))
	l := math.Log(float64(sum))
	var loss float64
	if eps < 1 {
		loss = (1 - e) * ((float64(m) - float64(xt)) + l)
	}
	if eps > 0 {
		loss += e * (l - float64(dsum)/v)
	}
	return loss
}

// crossEntropySpecial is crossEntropyRow for a row whose maximum m is NaN or
// ±Inf: the limits of the loss and gradient with Softmax's special values.
func crossEntropySpecial(d, x []float32, t int, eps, s, m float32) float64 {
	if m != m {
		fallback.FillNaN(d)
		return math.NaN()
	}
	e, v := float64(eps), float64(len(x))
	q := func(j int) float64 {
		if j == t {
			return (1 - e) + e/v
		}
		return e / v
	}
	inf := math.Inf(1)
	if m < 0 { // every logit −Inf: Softmax's zeros
		for j := range d {
			d[j] = float32(-float64(s) * q(j))
		}
		return inf
	}
	// k logits are +Inf and share the probability 1.
	tInf := x[t] == m
	k := 0
	for _, xj := range x {
		if xj == m {
			k++
		}
	}
	pk := 1 / float64(k)
	for j, xj := range x {
		p := 0.0
		if xj == m {
			p = pk
		}
		d[j] = float32(float64(s) * (p - q(j)))
	}
	var loss float64
	if eps < 1 {
		loss = inf
		if tInf {
			loss = (1 - e) * math.Log(float64(k))
		}
	}
	if eps > 0 {
		if k < len(x) {
			return inf
		}
		loss += e * math.Log(float64(k))
	}
	return loss
}
