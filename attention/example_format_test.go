package attention_test

import (
	"fmt"

	"github.com/heedml/heed/attention"
)

// A decoder's self-attention cache: room for the whole generation is reserved
// once, each step appends its key and value (stored as bfloat16, half the
// bytes of float32) and attends over everything so far, with no allocation.
func ExampleNewEmptyMemory() {
	const dk, dv = 4, 2
	cache := attention.NewEmptyMemory(attention.ScaledDot(), attention.BFloat16, dk, dv, 16)
	weights, context := make([]float32, 16), make([]float32, dv)
	steps := []struct{ q, k, v []float32 }{
		{[]float32{1, 0, 0, 0}, []float32{1, 0, 0, 0}, []float32{1, 0}},
		{[]float32{0, 1, 0, 0}, []float32{0, 2, 0, 0}, []float32{0, 1}},
		{[]float32{1, 1, 0, 0}, []float32{1, 1, 1, 1}, []float32{0.5, 0.5}},
	}
	for _, s := range steps {
		cache.Append(s.k, s.v)
		n := cache.Len()
		cache.Attend(weights[:n], context, s.q)
		fmt.Printf("n=%d α=%.3f c=%.3f\n", n, weights[:n], context)
	}
	// Output:
	// n=1 α=[1.000] c=[1.000 0.000]
	// n=2 α=[0.269 0.731] c=[0.269 0.731]
	// n=3 α=[0.233 0.384 0.384] c=[0.425 0.575]
}

// Multi-query decode (one KV head for four query heads), keys and values in
// 8-bit blocks.
func ExampleHeadCache() {
	const heads, kvHeads, dk, dh = 4, 1, 2, 2
	c := attention.NewHeadCache(attention.Q8, heads, kvHeads, dk, dh, 8)
	c.Append([]float32{1, 0}, []float32{1, 0})
	c.Append([]float32{0, 1}, []float32{0, 1})
	out := make([]float32, heads*dh)
	c.Attend(out, []float32{4, 0, 0, 4, 0, 0, 2, 2})
	fmt.Printf("%.2f\n", out)
	// Output:
	// [0.94 0.06 0.06 0.94 0.50 0.50 0.50 0.50]
}
