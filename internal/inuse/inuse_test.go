package inuse

import (
	"testing"
)

// TestFlag checks that, in race builds, a second Enter before Exit panics
// with Message, and that Exit frees the flag; elsewhere that nothing panics.
func TestFlag(t *testing.T) {
	var f Flag
	f.Enter("x")
	got := func() (msg any) {
		defer func() { msg = recover() }()
		f.Enter("x")
		return nil
	}()
	if Enabled && got != Message("x") {
		t.Fatalf("second Enter: panic %v, want %q", got, Message("x"))
	}
	if !Enabled && got != nil {
		t.Fatalf("second Enter without the race tag: panic %v", got)
	}
	f.Exit()
	f.Enter("x") // free again
	f.Exit()
}
