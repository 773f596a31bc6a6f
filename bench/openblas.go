package bench

import (
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/klauspost/cpuid/v2"
)

// OpenBLAS built with DYNAMIC_ARCH (Debian's) picks its kernels (its "core")
// from a table of CPU models when the library loads. A model newer than its
// table gets an old core: OpenBLAS 0.3.21 runs Prescott (SSE3) kernels on an
// Intel Xeon of family 6, model 207, with AVX-512. OPENBLAS_CORETYPE, read
// when the library loads, overrides the choice. The report compares the core
// OpenBLAS chose with the one that matches the CPU's instruction set, and
// where the chosen one is below it, runs again with OPENBLAS_CORETYPE set
// (cmd/report re-executes itself: the variable must be set before the
// library loads). A caller's OPENBLAS_CORETYPE is left alone.

// OpenBLASChoseEnv carries, into the re-executed report, the core OpenBLAS
// chose by itself.
const OpenBLASChoseEnv = "HEED_OPENBLAS_CHOSE"

// openblasInfo returns openblas_get_config and openblas_get_corename; nil
// when OpenBLAS is not built in (cgo_peers.go sets it).
var openblasInfo func() (config, core string)

// CPUID returns the CPU's vendor, family and model as cpuid reports them.
func CPUID() string {
	c := &cpuid.CPU
	return fmt.Sprintf("%s family %d model %d", c.VendorString, c.Family, c.Model)
}

// openblasLevel ranks OpenBLAS's x86-64 cores by the widest instructions
// their kernels use: 3 AVX-512, 2 AVX2 and FMA, 1 AVX, 0 older or unknown.
func openblasLevel(core string) int {
	switch strings.ToLower(core) {
	case "skylakex", "cooperlake", "sapphirerapids":
		return 3
	case "haswell", "zen", "excavator":
		return 2
	case "sandybridge", "bulldozer", "piledriver", "steamroller":
		return 1
	}
	return 0
}

// openblasCoreFor returns the OpenBLAS core that matches an x86-64 CPU:
// SkylakeX for Intel with AVX-512 (F, BW, DQ, VL, which its kernels use),
// Zen for AMD and Hygon with AVX2 and FMA, Haswell for others with AVX2 and
// FMA; "" for older CPUs, which OpenBLAS's table covers. AMD's AVX-512 cores
// keep Zen: OpenBLAS 0.3.21 has no AVX-512 core for them.
func openblasCoreFor(v cpuid.Vendor, avx512, avx2fma bool) string {
	switch {
	case v == cpuid.Intel && avx512:
		return "SkylakeX"
	case (v == cpuid.AMD || v == cpuid.Hygon) && avx2fma:
		return "Zen"
	case avx2fma:
		return "Haswell"
	}
	return ""
}

// openblasOverride returns the core to set OPENBLAS_CORETYPE to given the
// core OpenBLAS chose and the one that matches the CPU: want where chose is
// below it, else "".
func openblasOverride(chose, want string) string {
	if want != "" && openblasLevel(chose) < openblasLevel(want) {
		return want
	}
	return ""
}

func matchingCore() string {
	if runtime.GOARCH != "amd64" {
		return ""
	}
	c := &cpuid.CPU
	return openblasCoreFor(c.VendorID, c.Supports(cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512DQ, cpuid.AVX512VL),
		c.Supports(cpuid.AVX2, cpuid.FMA3))
}

// OpenBLASCoreToSet returns the core the process should be re-run with
// (OPENBLAS_CORETYPE) and the core OpenBLAS chose, or "" when OpenBLAS is not
// built in, the caller set OPENBLAS_CORETYPE, or OpenBLAS's choice matches
// the CPU.
func OpenBLASCoreToSet() (set, chose string) {
	if openblasInfo == nil || os.Getenv("OPENBLAS_CORETYPE") != "" {
		return "", ""
	}
	_, chose = openblasInfo()
	return openblasOverride(chose, matchingCore()), chose
}

// OpenBLASLine describes the OpenBLAS in this process for the report: its
// configuration, its core and who chose it; "" when it is not built in.
func OpenBLASLine() string {
	if openblasInfo == nil {
		return ""
	}
	config, core := openblasInfo()
	env := os.Getenv("OPENBLAS_CORETYPE")
	chose := os.Getenv(OpenBLASChoseEnv)
	switch {
	case env != "" && chose != "":
		return fmt.Sprintf("%s, core %s: OPENBLAS_CORETYPE=%s set by the report, since OpenBLAS chose %s, whose kernels are below this CPU's instruction set", config, core, env, chose)
	case env != "":
		return fmt.Sprintf("%s, core %s (OPENBLAS_CORETYPE=%s set by the caller)", config, core, env)
	}
	return fmt.Sprintf("%s, core %s (OpenBLAS's own choice)", config, core)
}
