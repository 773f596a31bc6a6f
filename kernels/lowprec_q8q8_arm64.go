//go:build !purego

package kernels

import (
	"fmt"
	"os"
	"strings"

	"github.com/heedml/heed/fallback"
	"github.com/klauspost/cpuid/v2"
)

// hasSDOT reports whether the CPU has the dot-product extension
// (FEAT_DotProd: SDOT; cpuid's ASIMDDP, the asimddp hwcap on Linux), which
// the Q8Q8 kernel needs on top of NEON.
var hasSDOT = cpuid.CPU.Supports(cpuid.ASIMDDP)

// useVNNI selects the SDOT kernel of Q8Q8 when the ISA is NEON (the name is
// the switch the Q8Q8 tests flip on every architecture; amd64's selects
// VPDPBUSD). It is hasSDOT unless HEED_SDOT=0, which forces the Go path;
// tests clear and set it to run both paths on a CPU that has SDOT.
var useVNNI = hasSDOT && sdotEnv(os.Getenv("HEED_SDOT"))

// sdotEnv reports whether HEED_SDOT's value env leaves the SDOT kernel on: ""
// or "1" yes, "0" no; any other value is reported by EnvErrors and ignored.
func sdotEnv(env string) bool {
	switch v := strings.TrimSpace(env); v {
	case "", "1":
		return true
	case "0":
		return false
	default:
		envErrs = append(envErrs, fmt.Errorf("heed/kernels: HEED_SDOT=%q: want 0 or 1; ignored", v))
		return true
	}
}

// vnniActive reports whether the Q8Q8 scores run the SDOT kernel: the CPU
// has it, HEED_SDOT did not turn it off, and the ISA is NEON.
func vnniActive() bool { return useVNNI && active == NEON }

// matVecQ8Q8 is MatVecQ8Q8 past its checks: matVecQ8Q8NEON where SDOT runs
// (the same bits as matVecQ8Q8Go), else matVecQ8Q8Go.
func matVecQ8Q8(dst []float32, a []Q8Block, lda int, x []Q8Block) {
	if vnniActive() {
		matVecQ8Q8NEON(dst, q8Bytes(a), lda, q8Bytes(x))
		return
	}
	matVecQ8Q8Go(dst, a, lda, x)
}

// decodeStepQ8Q8Asm takes no rows on arm64: the step is composed in Go
// (decodeStep), its scores by matVecQ8Q8.
func decodeStepQ8Q8Asm(ctx, scores []float32, k, v stored, st *SoftmaxState) (int, bool) {
	return 0, true
}

func toQ8Blocks(dst []Q8Block, src []float32) { fallback.QuantizeQ8(dst, src) }
