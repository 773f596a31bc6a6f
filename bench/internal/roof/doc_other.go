//go:build !amd64

// Package roof holds the hand-written amd64 loops that measure the machine's
// ceilings; other architectures have none.
package roof
