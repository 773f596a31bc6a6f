package kernels

import (
	"fmt"
	"os"
	"slices"
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

// ParseISA returns the ISA with the given name (generic, avx2, avx512, neon),
// ignoring case and surrounding white space.
func ParseISA(name string) (ISA, error) {
	name = strings.TrimSpace(name)
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
	// isaRequested and isaErr are what ISAConfig reports.
	isaRequested string
	isaErr       error
)

func init() {
	isaRequested, isaErr = capISA(os.Getenv("HEED_ISA"))
}

// capISA caps supported and active at the ISA named by env (HEED_ISA's value),
// and returns the trimmed name and, if the value was ignored, why.
func capISA(env string) (string, error) {
	name := strings.TrimSpace(env)
	if name == "" {
		return "", nil
	}
	limit, err := ParseISA(name)
	if err != nil {
		return name, fmt.Errorf("%w in HEED_ISA; ignored, using %v", err, active)
	}
	for i, s := range supported {
		if s == limit {
			supported = supported[:i+1]
			active = limit
			return name, nil
		}
	}
	return name, fmt.Errorf("heed/kernels: HEED_ISA=%s is not supported by this CPU and build (supported: %v); ignored, using %v", limit, supported, active)
}

// Active returns the ISA the kernels use.
func Active() ISA { return active }

// Supported returns the ISAs this CPU and build can run, Generic first and the
// default last. The purego build tag leaves only Generic.
//
// The environment variable HEED_ISA, read once at start-up, caps both this
// list and the default: HEED_ISA=generic, avx2, avx512 or neon, in any case
// and with surrounding white space ignored. A value that names no ISA, or one
// this CPU and build cannot run, is ignored (the best ISA stays the default)
// and reported by ISAConfig; it never stops the program.
func Supported() []ISA { return append([]ISA(nil), supported...) }

// ISAConfig reports HEED_ISA as read at start-up: requested is its value
// without surrounding white space ("" when unset or blank), and err is non-nil
// when that value was ignored because it names no ISA or one this CPU and
// build cannot run.
func ISAConfig() (requested string, err error) { return isaRequested, isaErr }

// avx512Width is the vector width in bits, 256 or 512, that
// HEED_AVX512_WIDTH or UseAVX512Width forces on every family of the AVX-512
// kernels that come in both widths, or 0: each family at its route's width
// (zmm in the dispatch file).
var avx512Width int

// envWidth is avx512Width as HEED_AVX512_WIDTH set it at start-up.
var envWidth int

// envErrs lists the HEED_* tuning variables that were set but ignored, for
// EnvErrors.
var envErrs []error

func init() {
	switch w := strings.TrimSpace(os.Getenv("HEED_AVX512_WIDTH")); w {
	case "":
	case "256":
		avx512Width = 256
	case "512":
		avx512Width = 512
	default:
		envErrs = append(envErrs, fmt.Errorf("heed/kernels: HEED_AVX512_WIDTH=%q: want 256 or 512; ignored, using this CPU's widths", w))
	}
	envWidth = avx512Width
}

// EnvErrors reports the tuning variables read at start-up that were set to a
// value they do not take and were therefore ignored: HEED_AVX512_WIDTH (256 or
// 512; surrounding white space is ignored). A bad value never stops the
// program. HEED_ISA is reported by ISAConfig.
func EnvErrors() []error { return append([]error(nil), envErrs...) }

// AVX512Width returns the vector width in bits, 256 or 512, that the AVX512
// implementations of Dot, Sum, Axpy, Scale, the element-wise kernels,
// MatTVec, MatVecBatch, SoftmaxMatTVec (its context pass), DotSoftmaxMatTVec
// and the reduced-precision steps compute in, or 0 where AVX512 is not
// supported. Both widths give results within the same error bounds. It is
// chosen at start-up from the CPU: 512 on Intel and on AMD family 1Ah (Zen 5)
// and later; 256 on AMD family 19h (Zen 4) and other CPUs, where it is the
// width of the families not listed next, Zen 4 running Dot, MatVecBatch,
// DotSoftmaxMatTVec and the reduced-precision steps at 512.
// HEED_AVX512_WIDTH=256|512 forces one width on every family (a bad value is
// ignored and reported by EnvErrors), as UseAVX512Width does.
func AVX512Width() int {
	if !slices.Contains(supported, AVX512) {
		return 0
	}
	if avx512Width != 0 {
		return avx512Width
	}
	return defaultAVX512Width()
}

// UseAVX512Width makes the AVX512 kernels that come in both widths compute
// in bits-wide vectors (256 or 512), every family alike, for tests and
// benchmarks that compare them; UseAVX512Width(0) restores the CPU's widths
// (those of HEED_AVX512_WIDTH where it is set). It is not safe to call while
// kernels run on other goroutines.
func UseAVX512Width(bits int) error {
	if bits == 0 {
		avx512Width = envWidth
		return nil
	}
	if bits != 256 && bits != 512 {
		return fmt.Errorf("heed/kernels: AVX-512 width %d: want 256 or 512 (0: the CPU's)", bits)
	}
	avx512Width = bits
	return nil
}

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
