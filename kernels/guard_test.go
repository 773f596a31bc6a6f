//go:build unix

package kernels

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// guard is a buffer with PROT_NONE pages on both sides: a slice handed out by
// end sits flush against the page after it, one from start against the page
// before it, so a kernel that reads or writes a byte outside crashes the test.
type guard struct {
	mem  []byte
	page int
	size int // usable bytes between the guard pages
}

// newGuard maps a guarded buffer of at least n float32s, unmapped at cleanup.
func newGuard(t *testing.T, n int) *guard {
	t.Helper()
	page := unix.Getpagesize()
	size := (n*4 + page - 1) / page * page
	if size == 0 {
		size = page
	}
	mem, err := unix.Mmap(-1, 0, size+2*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(mem) })
	if err := unix.Mprotect(mem[:page], unix.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mprotect(mem[page+size:], unix.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	return &guard{mem: mem, page: page, size: size}
}

// end returns n float32s ending at the upper guard page.
func (g *guard) end(n int) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(&g.mem[g.page+g.size-4*n])), n)
}

// start returns n float32s starting at the lower guard page.
func (g *guard) start(n int) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(&g.mem[g.page])), n)
}

// at returns n float32s flush against the upper guard page if atEnd, else
// against the lower one.
func (g *guard) at(n int, atEnd bool) []float32 {
	if atEnd {
		return g.end(n)
	}
	return g.start(n)
}

// forEachGuarded calls f for every length 0..257 and both placements, under
// every ISA; f gets a function that returns a fresh guarded slice of n floats
// (filled with random values) for each operand it needs.
func forEachGuarded(t *testing.T, maxN, operands int, f func(t *testing.T, n int, get func(n int) []float32)) {
	guards := make([]*guard, operands)
	for i := range guards {
		guards[i] = newGuard(t, maxN)
	}
	forEachISA(t, func(t *testing.T) {
		for n := 0; n <= 257; n++ {
			for _, atEnd := range []bool{false, true} {
				next := 0
				get := func(m int) []float32 {
					s := guards[next].at(m, atEnd)
					next++
					for i := range s {
						s[i] = float32(i%7) - 3
					}
					return s
				}
				f(t, n, get)
			}
		}
	})
}
