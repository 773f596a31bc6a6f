// Package inuse detects a value used by two goroutines at once, in race
// builds. The race detector cannot see the writes the kernels' assembly
// makes, so a Memory, Workspace or cell shared between goroutines without
// synchronisation goes unreported by it; with the race build tag, each
// such type's calls enter and leave a Flag, and a call that finds it taken
// panics, naming the type. Without the tag a Flag is empty and its methods
// do nothing.
package inuse

// Message returns the panic message of a value named what found in use by
// another call.
func Message(what string) string {
	return what + ": used by two goroutines at once (it is not safe for concurrent use)"
}
