//go:build race

package inuse

import "sync/atomic"

// Enabled reports whether Flags check: in race builds.
const Enabled = true

// Flag marks a value in use by a call.
type Flag struct{ busy atomic.Bool }

// Enter marks the value in use, or panics with Message(what) if another
// call has it.
func (f *Flag) Enter(what string) {
	if !f.busy.CompareAndSwap(false, true) {
		panic(Message(what))
	}
}

// Exit marks the value free.
func (f *Flag) Exit() { f.busy.Store(false) }
