package kernels

import (
	"math"

	"github.com/heedml/heed/fallback"
)

// TopK finds the k = len(idx) largest elements of x, for beam search over a
// vocabulary: it writes their values into val, largest first, and their
// indices into idx. Equal values are ordered by lower index (−0 equals +0),
// and NaN ranks above every number (NaNs first, by index), so a NaN in x is
// never silently dropped. It panics unless len(val) = len(idx) ≤ len(x).
// idx and val must not overlap x. It allocates nothing.
//
// After the first k elements only an element above the k-th value so far can
// enter, and TopK scans for the next such element with vector compares (or,
// in pure Go, skips blocks whose Max is at most that value); the work is a read of x plus O(k) per entry, about k·ln(n/k)
// entries for values in random order.
func TopK(idx []int, val []float32, x []float32) {
	if len(val) != len(idx) || len(idx) > len(x) {
		panicf("TopK: len(idx)=%d, len(val)=%d, len(x)=%d; want len(idx) = len(val) ≤ len(x)", len(idx), len(val), len(x))
	}
	k, n := len(idx), len(x)
	nb := n / topKSpan
	if k == 0 || k > len(topKScan{}.top) || nb < 2*k || nb > len(topKScan{}.bm) {
		fallback.TopKWith(idx, val, x, firstAbove)
		return
	}
	var sc topKScan
	sc.init(x, k, nb)
	fallback.TopKWith(idx, val, x, sc.above)
}

// topKSpan is the length of the spans whose maxima bound TopK's search.
const topKSpan = 512

// topKScan is TopK's scan over long vectors: the maxima of its spans of
// topKSpan elements, and floor, the k-th largest of them. k spans hold an
// element ≥ floor, so no element below it is among the k largest: the scan
// skips spans whose maximum is at most max(t, just below floor) and looks for
// elements above that within the others.
type topKScan struct {
	x     []float32
	bm    [256]float32
	nb    int
	floor float32 // the largest float below the k-th largest span maximum
	top   [64]float32
}

func (sc *topKScan) init(x []float32, k, nb int) {
	sc.x, sc.nb = x, nb
	sc.floor = float32(math.Inf(-1))
	if spanMaxima(sc.bm[:nb], x) {
		// A NaN somewhere: no floor, and every span is searched (a NaN
		// maximum is not ≤ any bound).
		for j := range sc.bm[:nb] {
			sc.bm[j] = float32(math.NaN())
		}
		return
	}
	// The k-th largest span maximum, by insertion into top[:k].
	top := sc.top[:k]
	for j := range top {
		top[j] = float32(math.Inf(-1))
	}
	for _, m := range sc.bm[:nb] {
		if m <= top[k-1] {
			continue
		}
		p := k - 1
		for p > 0 && m > top[p-1] {
			top[p] = top[p-1]
			p--
		}
		top[p] = m
	}
	if f := top[k-1]; f > float32(math.Inf(-1)) {
		sc.floor = math.Nextafter32(f, float32(math.Inf(-1)))
	}
}

// above is fallback.FirstAbove(xs, t) for a suffix xs of sc.x, restricted to
// elements above sc.floor as well (which TopKWith's contract allows: no
// element at or below it can enter).
func (sc *topKScan) above(xs []float32, t float32) int {
	if t != t {
		return firstAbove(xs, t)
	}
	te := max(t, sc.floor)
	base := len(sc.x) - len(xs)
	i := base
	for j := i / topKSpan; j < sc.nb; j++ {
		end := (j + 1) * topKSpan
		if sc.bm[j] <= te {
			i = end
			continue
		}
		if r := firstAbove(sc.x[i:end], te); i+r < end {
			return i + r - base
		}
		i = end
	}
	return i + firstAbove(sc.x[i:], te) - base
}

// spanMaxGo is spanMaxima with Max over each span.
func spanMaxGo(dst, x []float32) bool {
	nan := false
	for j := range dst {
		m := maxOf(x[j*topKSpan : (j+1)*topKSpan])
		nan = nan || m != m
		dst[j] = m
	}
	return nan
}

// topKBlock is the length of the blocks that firstAboveBlocks skips by their
// Max.
const topKBlock = 128

// firstAboveBlocks returns fallback.FirstAbove(x, t), skipping blocks whose
// maximum is at most t: TopK's scan where no assembly scan exists.
func firstAboveBlocks(x []float32, t float32) int {
	i := 0
	for ; i+topKBlock <= len(x); i += topKBlock {
		b := x[i : i+topKBlock]
		if m := maxOf(b); m <= t {
			continue
		}
		return i + fallback.FirstAbove(b, t)
	}
	return i + fallback.FirstAbove(x[i:], t)
}
