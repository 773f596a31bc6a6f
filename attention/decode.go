package attention

import (
	"github.com/heedml/heed/internal/inuse"
	"sync"
)

// HeadCache is one decoder layer's key-value cache for multi-head
// self-attention decoding, one query per head per step, with grouped-query
// heads: kvHeads KV heads, each a [NewEmptyMemory] Memory of the ScaledDot scorer in
// the chosen Format, shared by heads/kvHeads consecutive query heads.
//
// The layout is MultiHead's: a step's query is heads·d_k wide (head i at
// [i·d_k, (i+1)·d_k)), an appended key kvHeads·d_k and value kvHeads·d_h, and
// the output heads·d_h; query head i attends with KV head i/(heads/kvHeads).
// kvHeads = heads is plain multi-head attention, kvHeads = 1 multi-query.
//
// Each head's output is Memory.Attend's context for a ScaledDot step of its
// query against its KV head's stored keys and values, within that bound plus
// the Format's storage rounding. A HeadCache is not safe for concurrent use.
type HeadCache struct {
	heads, dk, dh int
	kv            []*Memory // one per KV head
	w             []float32 // the weights of one step per goroutine: parts×Cap

	// the call in progress
	out, q []float32
	parts  int
	wg     sync.WaitGroup
	busy   inuse.Flag // in race builds: a call is running
}

// NewHeadCache returns an empty cache of capacity positions for heads query
// heads of length dk over kvHeads KV heads with keys of length dk and values
// of length dh, stored in format f. It allocates the storage of capacity
// positions and the weights scratch up front, so that Append and Attend
// allocate nothing until the cache is full. It panics unless heads ≥ 1,
// kvHeads ≥ 1 divides heads, and dk, dh, capacity ≥ 0.
func NewHeadCache(f Format, heads, kvHeads, dk, dh, capacity int) *HeadCache {
	if heads < 1 || kvHeads < 1 || heads%kvHeads != 0 {
		panicf("HeadCache: %d query heads, %d KV heads: want kvHeads ≥ 1 dividing heads", heads, kvHeads)
	}
	if dk < 0 || dh < 0 || capacity < 0 {
		panicf("HeadCache: d_k=%d, d_h=%d, capacity %d: negative size", dk, dh, capacity)
	}
	c := &HeadCache{heads: heads, dk: dk, dh: dh, kv: make([]*Memory, kvHeads)}
	for g := range c.kv {
		c.kv[g] = NewEmptyMemory(ScaledDot(), f, dk, dh, capacity)
	}
	c.w = make([]float32, min(kvHeads, procs())*capacity)
	return c
}

// Len returns the number of positions stored.
func (c *HeadCache) Len() int { return c.kv[0].Len() }

// Cap returns the number of positions the cache holds room for.
func (c *HeadCache) Cap() int { return c.kv[0].Cap() }

// Append stores one position: key (kvHeads·d_k) and value (kvHeads·d_h),
// converted to the cache's format. It allocates nothing; it panics when the
// cache is full (Grow first) or on wrong lengths, naming them.
func (c *HeadCache) Append(key, value []float32) {
	kh := len(c.kv)
	if len(key) != kh*c.dk || len(value) != kh*c.dh {
		panicf("HeadCache: Append: len(key)=%d, len(value)=%d; want %d·%d and %d·%d", len(key), len(value), kh, c.dk, kh, c.dh)
	}
	if n := c.Len(); n == c.Cap() {
		panicf("HeadCache: Append: cache full: %d positions of capacity %d (Grow reserves more)", n, n)
	}
	for g, m := range c.kv {
		m.Append(key[g*c.dk:(g+1)*c.dk], value[g*c.dh:(g+1)*c.dh])
	}
}

// Grow reserves room for n more positions than Len, allocating and copying
// when the capacity is short. It panics if n < 0.
func (c *HeadCache) Grow(n int) {
	for _, m := range c.kv {
		m.Grow(n)
	}
	if need := min(len(c.kv), procs()) * c.Cap(); len(c.w) < need {
		c.w = make([]float32, need)
	}
}

// Truncate keeps the first n positions (Memory.Truncate on every KV head).
func (c *HeadCache) Truncate(n int) {
	for _, m := range c.kv {
		m.Truncate(n)
	}
}

// SetValid makes only the first n positions attended (Memory.SetValid on
// every KV head).
func (c *HeadCache) SetValid(n int) {
	for _, m := range c.kv {
		m.SetValid(n)
	}
}

// SetMask sets the mask of every KV head (Memory.SetMask: length Len or Cap,
// referenced, nil clears it).
func (c *HeadCache) SetMask(mask []bool) {
	for _, m := range c.kv {
		m.SetMask(mask)
	}
}

// Attend runs one decode step: out (heads·d_h) gets, for each query head i,
// the context of query[i·d_k:(i+1)·d_k] against KV head i/(heads/kvHeads),
// overwriting it. KV heads may run concurrently on the package's worker
// goroutines (each KV head's query heads in turn on one goroutine); a single
// KV head's long step may be split across them instead. It allocates nothing
// while Len ≤ Cap. It panics unless len(query) = heads·d_k and len(out) =
// heads·d_h, and if out overlaps query.
func (c *HeadCache) Attend(out, query []float32) {
	if len(query) != c.heads*c.dk || len(out) != c.heads*c.dh {
		panicf("HeadCache: Attend: len(query)=%d, len(out)=%d; want %d·%d and %d·%d", len(query), len(out), c.heads, c.dk, c.heads, c.dh)
	}
	checkDisjoint("HeadCache: Attend", "out", out, "query", query)
	c.busy.Enter("attention.HeadCache")
	defer c.busy.Exit()
	kh := len(c.kv)
	parts := multiHeadWorkers(c.Len()*(c.dk+c.dh)*c.heads, kh)
	parts = min(parts, len(c.w)/max(1, c.Cap()))
	c.out, c.q, c.parts = out, query, max(1, parts)
	runParallel(c, c.parts, &c.wg)
	c.out, c.q = nil, nil
}

// run computes KV heads p, p+parts, … and their query heads.
func (c *HeadCache) run(p int) {
	group := c.heads / len(c.kv)
	call := callAttend // one goroutine: a long step may split itself
	if c.parts > 1 {
		call = callStep
	}
	for g := p; g < len(c.kv); g += c.parts {
		m := c.kv[g]
		n := m.Len()
		w := c.w[p*c.Cap() : p*c.Cap()+n]
		for i := g * group; i < (g+1)*group; i++ {
			m.step(m.plan(call, 1), w, c.out[i*c.dh:(i+1)*c.dh], c.q[i*c.dk:(i+1)*c.dk])
		}
	}
}
