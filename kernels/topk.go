package kernels

import (
	"math"

	"github.com/heedml/heed/internal/fallback"
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
// in pure Go, skips blocks whose Max is at most that value); the work is a
// read of x plus O(k) per entry, about k·ln(n/k) entries for values in random
// order. For n from 1024·k to 2¹⁷ it first takes the maxima of spans of x,
// and then reads only the spans that can hold one of the k largest.
func TopK(idx []int, val []float32, x []float32) {
	if len(val) != len(idx) || len(idx) > len(x) {
		panicf("TopK: len(idx)=%d, len(val)=%d, len(x)=%d; want len(idx) = len(val) ≤ len(x)", len(idx), len(val), len(x))
	}
	k, n := len(idx), len(x)
	nb := n / topKSpan
	if k == 0 || k > topKGroup || nb < 2*k || nb > len(topKScan{}.bm) {
		fallback.TopKWith(idx, val, x, firstAbove)
		return
	}
	var sc topKScan
	if !sc.init(x, k, nb) && sc.search(idx, val) {
		return
	}
	fallback.TopKWith(idx, val, x, sc.above)
}

// topKSpan is the length of the spans whose maxima bound TopK's search.
const topKSpan = 512

// topKScan is TopK's scan over long vectors: the maxima of its spans of
// topKSpan elements, and floor, just below the k-th largest of them. k
// elements of x lie above floor, so no element at or below it is among the k
// largest: the scan skips spans whose maximum is at most max(t, floor) and
// looks for elements above that within the others.
type topKScan struct {
	x     []float32
	bm    [256]float32
	nb    int
	floor float32
}

// init takes the span maxima and the floor; it reports whether search does
// not apply: x holds a NaN in its spans (then every span is searched, without
// a floor), or the floor is −Inf.
func (sc *topKScan) init(x []float32, k, nb int) (noSearch bool) {
	sc.x, sc.nb = x, nb
	sc.floor = float32(math.Inf(-1))
	f, nan, ok := spanMaxKth(sc.bm[:nb], x, k)
	if !ok {
		nan = spanMaxima(sc.bm[:nb], x)
	}
	if nan {
		// A NaN somewhere: no floor, and every span is searched (a NaN
		// maximum is not ≤ any bound).
		for j := range sc.bm[:nb] {
			sc.bm[j] = float32(math.NaN())
		}
		return true
	}
	// The maxima padded with −Inf to whole groups, for aboveSpans.
	for j := nb; j < sc.groups(); j++ {
		sc.bm[j] = float32(math.Inf(-1))
	}
	// The floor: the k-th largest span maximum, if spanMaxKth did not take
	// it. kthLargest's work grows as the square of the maxima: beyond one
	// group (over the padding, which does not change it: nb ≥ k) they are
	// inserted into a sorted list in Go.
	if !ok {
		if nb <= topKGroup {
			f = kthLargest(sc.bm[:topKGroup], k)
		} else {
			f = kthLargestGo(sc.bm[:nb], k)
		}
	}
	if f == float32(math.Inf(-1)) {
		// Perhaps fewer than k spans hold an element above −Inf: −Inf
		// elements may be among the k largest, and collecting those above
		// the floor would miss them. TopKWith's scan takes them.
		return true
	}
	sc.floor = math.Nextafter32(f, float32(math.Inf(-1)))
	return false
}

// groups is the number of span maxima rounded up to whole topKGroups.
func (sc *topKScan) groups() int { return (sc.nb + topKGroup - 1) &^ (topKGroup - 1) }

// topKGroup is the number of span maxima kthLargest and aboveSpans take at a
// time (asmgen's topKGroup); bm's length is a multiple of it.
const topKGroup = 64

// kthLargestGo is kthLargest by insertion into a list of the k largest
// (any len(m) ≥ k).
func kthLargestGo(m []float32, k int) float32 {
	var buf [64]float32
	top := buf[:k]
	for j := range top {
		top[j] = float32(math.Inf(-1))
	}
	for _, v := range m {
		if v <= top[k-1] {
			continue
		}
		p := k - 1
		for p > 0 && v > top[p-1] {
			top[p] = top[p-1]
			p--
		}
		top[p] = v
	}
	return top[k-1]
}

// topKCands bounds the candidates search collects: it first takes up to
// topKCandsFew with a smaller buffer (cheaper to clear), then, if there are
// more, collects again up to topKCands.
const (
	topKCandsFew = 128
	topKCands    = 512
)

// search is TopK for x free of NaN in its spans: it collects every element
// above the floor, in index order, with one aboveSpans call (over the spans
// whose maximum is above it, and the elements after the last span), then
// keeps the k best of them (topKKeep). The k largest are among them, as no
// element at or below the floor can be. It reports false, having written
// nothing, if there are more than topKCands candidates.
func (sc *topKScan) search(idx []int, val []float32) bool {
	var cands [topKCandsFew]int32
	nc := aboveSpans(cands[:], sc.x, sc.bm[:sc.groups()], sc.floor)
	if nc < 0 {
		return sc.searchMany(idx, val)
	}
	topKKeep(idx, val, sc.x, cands[:nc])
	return true
}

// searchMany is search with room for topKCands candidates.
//
//go:noinline
func (sc *topKScan) searchMany(idx []int, val []float32) bool {
	var cands [topKCands]int32
	nc := aboveSpans(cands[:], sc.x, sc.bm[:sc.groups()], sc.floor)
	if nc < 0 {
		return false
	}
	topKKeep(idx, val, sc.x, cands[:nc])
	return true
}

// topKKeep writes the k = len(idx) best of the candidates x[c], c in cands
// (increasing indices, at least k of them), into idx and val by TopK's order:
// up to 8 candidates free of NaN by a sorting network (topKSort8), more, or a
// NaN, by TopKWith's insertion.
func topKKeep(idx []int, val []float32, x []float32, cands []int32) {
	k := len(idx)
	if len(cands) <= 8 && topKSort8(idx, val, x, cands) {
		return
	}
	for q, c := range cands {
		i, v := int(c), x[c]
		n := k - 1
		if q < k {
			n = q
		} else if !topKBeats(v, val[k-1]) {
			continue
		}
		p := n
		for p > 0 && topKBeats(v, val[p-1]) {
			idx[p], val[p] = idx[p-1], val[p-1]
			p--
		}
		idx[p], val[p] = i, v
	}
}

// topKSort8 is topKKeep for at most 8 candidates by a sorting network
// without a branch on the data (builtin min and max of integer keys): each
// candidate's key is its value's bits made monotonic as a signed integer (−0
// as +0, by adding +0) above its index reversed, so that the keys' order is
// TopK's. It reports false, having written nothing, if a candidate is NaN.
func topKSort8(idx []int, val []float32, x []float32, cands []int32) bool {
	var key [8]int64
	for q := range key {
		key[q] = math.MinInt64 // below every candidate's key
	}
	nan := false
	for q, c := range cands {
		v := x[c]
		nan = nan || v != v
		b := int32(math.Float32bits(v + 0))
		b ^= int32(uint32(b>>31) >> 1)
		key[q] = int64(b)<<32 | int64(math.MaxUint32-uint32(c))
	}
	if nan {
		return false
	}
	// Knuth's 19 comparators sorting 8 values, here descending, on locals
	// (kept in registers).
	k0, k1, k2, k3, k4, k5, k6, k7 := key[0], key[1], key[2], key[3], key[4], key[5], key[6], key[7]
	k0, k2 = max(k0, k2), min(k0, k2)
	k1, k3 = max(k1, k3), min(k1, k3)
	k4, k6 = max(k4, k6), min(k4, k6)
	k5, k7 = max(k5, k7), min(k5, k7)
	k0, k4 = max(k0, k4), min(k0, k4)
	k1, k5 = max(k1, k5), min(k1, k5)
	k2, k6 = max(k2, k6), min(k2, k6)
	k3, k7 = max(k3, k7), min(k3, k7)
	k0, k1 = max(k0, k1), min(k0, k1)
	k2, k3 = max(k2, k3), min(k2, k3)
	k4, k5 = max(k4, k5), min(k4, k5)
	k6, k7 = max(k6, k7), min(k6, k7)
	k2, k4 = max(k2, k4), min(k2, k4)
	k3, k5 = max(k3, k5), min(k3, k5)
	k1, k4 = max(k1, k4), min(k1, k4)
	k3, k6 = max(k3, k6), min(k3, k6)
	k1, k2 = max(k1, k2), min(k1, k2)
	k3, k4 = max(k3, k4), min(k3, k4)
	k5, k6 = max(k5, k6), min(k5, k6)
	key = [8]int64{k0, k1, k2, k3, k4, k5, k6, k7}
	for q := range idx {
		i := int(math.MaxUint32 - uint32(key[q&7]))
		idx[q], val[q] = i, x[i]
	}
	return true
}

// topKBeats reports whether v ranks above w, v's index being the higher: NaN
// above numbers, equal values keep their order (fallback's rule).
func topKBeats(v, w float32) bool {
	if v != v {
		return w == w
	}
	return v > w
}

// aboveSpansGo is aboveSpans by one aboveAll call per span.
func aboveSpansGo(dst []int32, x []float32, bm []float32, t float32) int {
	nc := 0
	add := func(start, end int) bool {
		r := aboveAll(dst[nc:], x[start:end], t)
		if r < 0 {
			return false
		}
		for q := nc; q < nc+r; q++ {
			dst[q] += int32(start)
		}
		nc += r
		return true
	}
	nb := len(x) / topKSpan
	for j, m := range bm[:nb] {
		if !(m <= t) && !add(j*topKSpan, (j+1)*topKSpan) {
			return -1
		}
	}
	if !add(nb*topKSpan, len(x)) {
		return -1
	}
	return nc
}

// aboveAllGo is aboveAll by firstAbove.
func aboveAllGo(dst []int32, x []float32, t float32) int {
	n := 0
	for i := 0; ; i++ {
		i += firstAbove(x[i:], t)
		if i >= len(x) {
			return n
		}
		if n == len(dst) {
			return -1
		}
		dst[n] = int32(i)
		n++
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
