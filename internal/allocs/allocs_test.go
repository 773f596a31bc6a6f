package allocs

import "testing"

var sink []byte

func TestCount(t *testing.T) {
	const runs = 5
	calls := 0
	for _, tc := range []struct {
		name string
		f    func()
		want uint64
	}{
		{"none", func() {}, 0},
		{"every call", func() { sink = make([]byte, 64) }, runs},
		// testing.AllocsPerRun(5, f) reports this as 0: one allocation in
		// every third call.
		{"every third call", func() {
			calls++
			if calls%3 == 0 {
				sink = make([]byte, 64)
			}
		}, 1},
		// One allocation in the first measurement only (call 4): not a
		// steady state, not counted.
		{"once", func() {
			calls++
			if calls == 4 {
				sink = make([]byte, 64)
			}
		}, 0},
	} {
		calls = 0
		if got := Count(runs, tc.f); got != tc.want {
			t.Errorf("%s: Count = %d, want %d", tc.name, got, tc.want)
		}
	}
	if sink == nil {
		t.Fatal("no allocation reached sink")
	}
}
