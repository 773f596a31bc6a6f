//go:build !race

package inuse

// Enabled reports whether Flags check: in race builds.
const Enabled = false

// Flag marks a value in use by a call; without the race build tag it is
// empty and does nothing.
type Flag struct{}

// Enter does nothing without the race build tag.
func (*Flag) Enter(string) {}

// Exit does nothing without the race build tag.
func (*Flag) Exit() {}
