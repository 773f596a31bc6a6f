package kernels

import "github.com/heedml/heed/fallback"

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
	fallback.TopKWith(idx, val, x, firstAbove)
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
