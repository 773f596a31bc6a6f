package kernels

import (
	"fmt"
	"os"
	"strings"
)

// ISA names an implementation of the kernels.
type ISA uint8

const (
	// Generic is the pure-Go implementation in package fallback.
	Generic ISA = iota
	// AVX2 is AVX2 with FMA3 and BMI2 (x86-64-v3).
	AVX2
	// AVX512 is AVX-512 F, BW, DQ and VL, with AVX2 and FMA3.
	AVX512
	// NEON is arm64 Advanced SIMD.
	NEON
)

var isaNames = [...]string{Generic: "generic", AVX2: "avx2", AVX512: "avx512", NEON: "neon"}

func (i ISA) String() string {
	if int(i) < len(isaNames) {
		return isaNames[i]
	}
	return fmt.Sprintf("ISA(%d)", uint8(i))
}

// ParseISA returns the ISA with the given name (generic, avx2, avx512, neon).
func ParseISA(name string) (ISA, error) {
	for i, n := range isaNames {
		if strings.EqualFold(name, n) {
			return ISA(i), nil
		}
	}
	return Generic, fmt.Errorf("heed/kernels: unknown ISA %q (want one of %s)", name, strings.Join(isaNames[:], ", "))
}

var (
	// supported lists the ISAs this CPU and build can run, best last.
	supported = detect()
	// active is the ISA the kernels dispatch to.
	active = supported[len(supported)-1]
)

func init() {
	name := os.Getenv("HEED_ISA")
	if name == "" {
		return
	}
	limit, err := ParseISA(name)
	if err != nil {
		panic(err.Error() + " in HEED_ISA")
	}
	for i, s := range supported {
		if s == limit {
			supported = supported[:i+1]
			active = limit
			return
		}
	}
	// An ISA this CPU lacks caps nothing: the best available is kept.
}

// Active returns the ISA the kernels use.
func Active() ISA { return active }

// Supported returns the ISAs this CPU and build can run, Generic first and the
// default last. HEED_ISA=generic|avx2|avx512|neon caps both this list and the
// default; the purego build tag leaves only Generic.
func Supported() []ISA { return append([]ISA(nil), supported...) }

// Use makes every kernel dispatch to isa, for tests and benchmarks that compare
// implementations. It is not safe to call while kernels run on other goroutines.
func Use(isa ISA) error {
	for _, s := range supported {
		if s == isa {
			active = isa
			return nil
		}
	}
	return fmt.Errorf("heed/kernels: ISA %v is not supported here (supported: %v)", isa, supported)
}
