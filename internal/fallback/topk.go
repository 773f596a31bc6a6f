package fallback

// TopK writes the len(idx) largest elements of x into val, largest first, and
// their indices into idx (len(val) = len(idx) ≤ len(x)); equal values are
// ordered by lower index, −0 equals +0, and NaN ranks above every number.
func TopK(idx []int, val []float32, x []float32) { TopKWith(idx, val, x, FirstAbove) }

// FirstAbove returns the smallest i with x[i] > t or x[i] NaN (that is,
// !(x[i] ≤ t)), or len(x) if there is none.
func FirstAbove(x []float32, t float32) int {
	for i, v := range x {
		if !(v <= t) {
			return i
		}
	}
	return len(x)
}

// TopKWith is TopK with the scan for the next candidate as a parameter:
// above(x, t) must return FirstAbove(x, t). It keeps the best k so far
// sorted in idx and val; after the first k elements, only an element that
// beats the k-th best strictly can enter (a later equal one has a higher
// index), so everything at or below the k-th value is skipped by the scan.
func TopKWith(idx []int, val []float32, x []float32, above func(x []float32, t float32) int) {
	k := len(idx)
	if k == 0 {
		return
	}
	val = val[:k]
	for i := 0; i < k; i++ {
		insert(idx, val, i, i, x[i])
	}
	for i := k; i < len(x); {
		t := val[k-1]
		if t != t { // the k best are NaN: nothing later beats them
			return
		}
		j := above(x[i:], t)
		if i += j; i >= len(x) {
			return
		}
		insert(idx, val, k-1, i, x[i])
		i++
	}
}

// insert places (i, v) into the sorted idx[:n+1], val[:n+1], whose first n
// entries are sorted (the n+1-th is overwritten): v beats every later entry
// it is placed before.
func insert(idx []int, val []float32, n, i int, v float32) {
	p := n
	for p > 0 && beats(v, val[p-1]) {
		idx[p], val[p] = idx[p-1], val[p-1]
		p--
	}
	idx[p], val[p] = i, v
}

// beats reports whether v ranks above w, v's index being the higher: NaN
// above numbers, equal values keep their order.
func beats(v, w float32) bool {
	if v != v {
		return w == w
	}
	return v > w
}
