//go:build !purego

package kernels

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/heedml/heed/fallback"
	"github.com/klauspost/cpuid/v2"
)

// This file is the amd64 dispatch: CPU detection, and for each kernel the
// switch on the active ISA that calls the generated assembly (stubs in
// *_stub_amd64.go) or package fallback. kernels/DESIGN.md explains the
// routes.

func detect() []ISA {
	isas := []ISA{Generic}
	if !cpuid.CPU.Supports(cpuid.AVX, cpuid.AVX2, cpuid.FMA3, cpuid.BMI2) {
		return isas
	}
	isas = append(isas, AVX2)
	if cpuid.CPU.Supports(cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512DQ, cpuid.AVX512VL) {
		isas = append(isas, AVX512)
	}
	return isas
}

// defaultAVX512Width is the width, in bits, of the AVX-512 kernels that come
// in both (AVX512Width). Intel's AVX-512 cores load two 64-byte vectors per
// cycle from L1 and execute 512-bit FMAs at full width, as do AMD's from
// family 1Ah (Zen 5): 512. AMD family 19h (Zen 4) splits every 512-bit
// operation into two 256-bit halves and loads 64 bytes per cycle whatever the
// width, so YMM is as fast and its horizontal sums are shorter: 256. Other
// CPUs keep 256. asmgen/DESIGN.md has the measurements.
func defaultAVX512Width() int {
	return avx512WidthFor(cpuid.CPU.VendorID, cpuid.CPU.Family)
}

// avx512WidthFor is defaultAVX512Width's rule for a CPU vendor and family.
func avx512WidthFor(vendor cpuid.Vendor, family int) int {
	switch {
	case vendor == cpuid.Intel:
		return 512
	case vendor == cpuid.AMD && family >= 0x1a:
		return 512
	}
	return 256
}

// zmm reports whether the dual-width AVX-512 kernels (dot, sum, axpy, scale,
// matTVec, matVecBatch, softmaxMatTVec, dotSoftmaxMatTVec) take their ZMM
// variant, named with the suffix AVX512Z.
func zmm() bool { return avx512Width == 512 }

// l2Bytes returns the size of one core's L2 cache, or 1 MiB if cpuid cannot
// tell.
func l2Bytes() int {
	if n := cpuid.CPU.Cache.L2; n > 0 {
		return n
	}
	return 1 << 20
}

func dot(x, y []float32) float32 {
	switch active {
	case AVX512:
		if zmm() {
			return dotAVX512Z(x, y)
		}
		return dotAVX512(x, y)
	case AVX2:
		return dotAVX2(x, y)
	}
	return fallback.Dot(x, y)
}

func axpy(alpha float32, x, y []float32) {
	switch active {
	case AVX512:
		if zmm() {
			axpyAVX512Z(alpha, x, y)
		} else {
			axpyAVX512(alpha, x, y)
		}
	case AVX2:
		axpyAVX2(alpha, x, y)
	default:
		fallback.Axpy(alpha, x, y)
	}
}

func scale(alpha float32, x []float32) {
	switch active {
	case AVX512:
		if zmm() {
			scaleAVX512Z(alpha, x)
		} else {
			scaleAVX512(alpha, x)
		}
	case AVX2:
		scaleAVX2(alpha, x)
	default:
		fallback.Scale(alpha, x)
	}
}

func sum(x []float32) float32 {
	switch active {
	case AVX512:
		if zmm() {
			return sumAVX512Z(x)
		}
		return sumAVX512(x)
	case AVX2:
		return sumAVX2(x)
	}
	return fallback.Sum(x)
}

func maxOf(x []float32) float32 {
	switch active {
	case AVX512:
		return maxAVX512(x)
	case AVX2:
		return maxAVX2(x)
	}
	return fallback.Max(x)
}

func matVec(dst, a []float32, lda int, x []float32) {
	if (active == AVX2 || active == AVX512) && matVecFar(len(dst), lda, len(x)) {
		matVecFarKernel()(dst, a, lda, x)
		return
	}
	switch active {
	case AVX512:
		matVecAVX512(dst, a, lda, x)
	case AVX2:
		matVecAVX2(dst, a, lda, x)
	default:
		fallback.MatVec(dst, a, lda, x)
	}
}

// matVecFarVariant is the matVec kernel for an A that spans more than
// matVecFarBytes (it streams from memory, or from L3):
//
//   - "rows4": matVecAVX2/AVX512, four adjacent rows side by side, as for any A;
//   - "seq", "seq-pf4k": matVecSeq, the rows one after another in address
//     order (one stream), without and with software prefetch 4 KiB ahead;
//   - "split4", "split4-pf1k", "split4-pf4k": matVecSplit4, the rows in four
//     chunks read side by side (four streams, each in address order), without
//     and with software prefetch 1 or 4 KiB ahead in each; "split4-pf1k-ymm"
//     is split4-pf1k in YMM vectors on AVX-512 (the AVX2 kernel).
//
// The choice by CPU is defaultMatVecFar; HEED_MATVEC_FAR overrides it for
// benchmarking.
var matVecFarVariant = defaultMatVecFar(cpuid.CPU.VendorID)

// matVecFarVariants are the values matVecFarVariant takes.
var matVecFarVariants = []string{"rows4", "seq", "seq-pf4k", "split4", "split4-pf1k", "split4-pf4k", "split4-pf1k-ymm"}

// matVecFarBytes is the span of A beyond which matVec takes matVecFarVariant:
// this core's L2.
var matVecFarBytes = l2Bytes()

// defaultMatVecFar is matVecFarVariant's rule: on Intel, "split4-pf1k",
// where one core's bandwidth from memory grows with the number of streams
// the L2 prefetcher follows (one per 4 KiB page) and four adjacent rows
// share their pages; elsewhere "rows4", as on Zen 4, where the four-row
// kernel with its PREFETCHT1 was measured and the split kernels were not.
// kernels/DESIGN.md has the measurements.
func defaultMatVecFar(vendor cpuid.Vendor) string {
	if vendor == cpuid.Intel {
		return "split4-pf1k"
	}
	return "rows4"
}

func init() {
	v := strings.TrimSpace(os.Getenv("HEED_MATVEC_FAR"))
	switch {
	case v == "":
	case slices.Contains(matVecFarVariants, v):
		matVecFarVariant = v
	default:
		envErrs = append(envErrs, fmt.Errorf("heed/kernels: HEED_MATVEC_FAR=%q: want one of %s; ignored, using %s", v, strings.Join(matVecFarVariants, ", "), matVecFarVariant))
	}
}

// matVecFar reports whether matVec of rows×cols at stride lda takes
// matVecFarKernel: matVecFarVariant is not rows4, A spans more than
// matVecFarBytes, and cols ≥ 8 (AVX2 tails reload a whole vector).
func matVecFar(rows, lda, cols int) bool {
	return matVecFarVariant != "rows4" && cols >= 8 && rows*lda*4 > matVecFarBytes
}

// matVecFarKernel returns the kernel that matVecFarVariant (not rows4) names
// under the active ISA.
func matVecFarKernel() func(dst, a []float32, lda int, x []float32) {
	z := active == AVX512
	switch matVecFarVariant {
	case "seq":
		if z {
			return matVecSeqAVX512
		}
		return matVecSeqAVX2
	case "seq-pf4k":
		if z {
			return matVecSeqPF4KAVX512
		}
		return matVecSeqPF4KAVX2
	case "split4":
		if z {
			return matVecSplit4AVX512
		}
		return matVecSplit4AVX2
	case "split4-pf4k":
		if z {
			return matVecSplit4PF4KAVX512
		}
		return matVecSplit4PF4KAVX2
	case "split4-pf1k":
		if z {
			return matVecSplit4PF1KAVX512
		}
	}
	return matVecSplit4PF1KAVX2
}

// The AVX2 matTVec, matVecBatch and softmaxMatTVec kernels need at least one
// full vector (8) of columns: their tails reload the last full vector.

func matTVec(dst, a []float32, lda int, x []float32) {
	switch {
	case active == AVX512 && zmm():
		matTVecAVX512Z(dst, a, lda, x)
	case active == AVX512:
		matTVecAVX512(dst, a, lda, x)
	case active == AVX2 && len(dst) >= 8:
		matTVecAVX2(dst, a, lda, x)
	default:
		fallback.MatTVec(dst, a, lda, x)
	}
}

func matVecBatch(d []float32, ldd int, a []float32, lda int, x []float32, ldx int, rows, cols, batch int) {
	switch {
	case active == AVX512 && zmm():
		matVecBatchAVX512Z(d, ldd, a, lda, x, ldx, rows, cols, batch)
	case active == AVX512:
		matVecBatchAVX512(d, ldd, a, lda, x, ldx, rows, cols, batch)
	case active == AVX2 && cols >= 8:
		matVecBatchAVX2(d, ldd, a, lda, x, ldx, rows, cols, batch)
	default:
		fallback.MatVecBatch(d, ldd, a, lda, x, ldx, rows, cols, batch)
	}
}

func exp(dst, x []float32) {
	switch active {
	case AVX512:
		expAVX512(dst, x)
	case AVX2:
		expAVX2(dst, x)
	default:
		fallback.Exp(dst, x)
	}
}

func tanh(dst, x []float32) {
	switch active {
	case AVX512:
		tanhAVX512(dst, x)
	case AVX2:
		tanhAVX2(dst, x)
	default:
		fallback.Tanh(dst, x)
	}
}

func softmax(dst, x []float32) {
	var st int
	switch active {
	case AVX512:
		st = softmaxAVX512(dst, x)
	case AVX2:
		st = softmaxAVX2(dst, x)
	default:
		fallback.Softmax(dst, x)
		return
	}
	if st != softmaxDone {
		softmaxFinish(st, dst, x)
	}
}

// softmaxMatTVec is SoftmaxMatTVec for len(x) ≥ 1 and len(dst) ≥ 1. A row
// whose max is not finite or that holds a NaN is finished by the Go softmax
// and then given its context.
func softmaxMatTVec(dst, a []float32, lda int, x []float32) {
	var st int
	switch {
	case active == AVX512 && zmm():
		st = softmaxMatTVecAVX512Z(dst, a, lda, x)
	case active == AVX512:
		st = softmaxMatTVecAVX512(dst, a, lda, x)
	case active == AVX2 && len(dst) >= 8:
		st = softmaxMatTVecAVX2(dst, a, lda, x)
	default:
		softmax(x, x)
		matTVec(dst, a, lda, x)
		return
	}
	if st != softmaxDone {
		softmaxFinish(st, x, x)
		matTVec(dst, a, lda, x)
	}
}

func additiveScore(dst, k []float32, ldk int, q, v []float32) {
	switch active {
	case AVX512:
		additiveScoreAVX512(dst, k, ldk, q, v)
	case AVX2:
		additiveScoreAVX2(dst, k, ldk, q, v)
	default:
		fallback.AdditiveScore(dst, k, ldk, q, v)
	}
}

// dotSoftmaxFarBytes is the span of A beyond which DotSoftmaxMatTVec takes
// its far kernel (scores row by row, no software prefetch): this core's L2.
var dotSoftmaxFarBytes = l2Bytes()

// dotSoftmaxKernel, when not kernelBySpan, makes DotSoftmaxMatTVec take that
// kernel at every size (for tests).
var dotSoftmaxKernel = kernelBySpan

const (
	kernelBySpan = iota // far beyond dotSoftmaxFarBytes or for rows 4 KiB apart
	kernelNear
	kernelFar
)

// dotSoftmaxFar reports whether DotSoftmaxMatTVec takes its far kernel for n
// rows of stride lda: when they span more than dotSoftmaxFarBytes, or are a
// multiple of 4 KiB apart (rows that share L1 sets).
func dotSoftmaxFar(n, lda int) bool {
	switch dotSoftmaxKernel {
	case kernelNear:
		return false
	case kernelFar:
		return true
	}
	return n*lda*4 > dotSoftmaxFarBytes || lda%1024 == 0
}

// dotSoftmaxMatTVec is DotSoftmaxMatTVec for len(scores) ≥ 1 and len(ctx) ≥ 1:
// the assembly for the whole blocks of eight rows when the columns are whole
// vectors of 8, dotSoftmaxRows for the rest.
func dotSoftmaxMatTVec(ctx, scores, a []float32, lda int, h []float32, st *SoftmaxState) bool {
	n := 0
	if (active == AVX2 || active == AVX512) && len(ctx)%8 == 0 {
		n = len(scores) &^ 7
		if n > 0 {
			kernel := dotSoftmaxMatTVecAVX2
			far := dotSoftmaxFar(n, lda)
			switch {
			case far:
				kernel = dotSoftmaxFarKernel()
			case active == AVX512 && zmm():
				kernel = dotSoftmaxMatTVecAVX512Z
			case active == AVX512:
				kernel = dotSoftmaxMatTVecAVX512
			}
			var split dotSoftmaxKernelFunc
			k := 0
			if far && active == AVX512 && !dotSoftmaxFarAhead {
				split, k = dotSoftmaxSplitKernel()
			}
			if k > 0 && n >= 8*k {
				// The k-stream kernel takes a multiple of 8·k rows, the
				// one-stream kernel the rest.
				n2 := n - n%(8*k)
				var r int
				st.Max, st.Sum, r = split(ctx, scores[:n2], a, lda, h, st.Max, st.Sum)
				if r != 0 {
					return false
				}
				if n2 < n {
					st.Max, st.Sum, r = kernel(ctx, scores[n2:n], a[n2*lda:], lda, h, st.Max, st.Sum)
					if r != 0 {
						return false
					}
				}
			} else {
				var r int
				st.Max, st.Sum, r = kernel(ctx, scores[:n], a, lda, h, st.Max, st.Sum)
				if r != 0 {
					return false
				}
			}
		}
		if n == len(scores) {
			return true
		}
	}
	return dotSoftmaxRows(ctx, scores[n:], a[n*lda:], lda, h, st)
}

// dotSoftmaxFarPF is the prefetch distance, in blocks of eight rows, of the
// far DotSoftmaxMatTVec kernel: 0 (the hardware prefetcher alone), 1, 2 or 4.
// HEED_DOTSOFTMAX_PF=0|1|2|4 overrides the choice by CPU for benchmarking.
var dotSoftmaxFarPF = defaultDotSoftmaxFarPF(cpuid.CPU.VendorID)

// defaultDotSoftmaxFarPF is dotSoftmaxFarPF's rule: 1 on Intel, where the
// hardware prefetcher alone fell behind the one stream of rows and
// prefetching one block ahead read it faster (no further distance helped);
// 0 elsewhere, as on Zen 4, where the far kernel without software prefetch
// streamed near the memory ceiling (the prefetching variants have not been
// measured there). asmgen/DESIGN.md has the measurements.
func defaultDotSoftmaxFarPF(vendor cpuid.Vendor) int {
	if vendor == cpuid.Intel {
		return 1
	}
	return 0
}

func init() {
	switch v := strings.TrimSpace(os.Getenv("HEED_DOTSOFTMAX_PF")); v {
	case "":
	case "0", "1", "2", "4":
		dotSoftmaxFarPF = int(v[0] - '0')
	default:
		envErrs = append(envErrs, fmt.Errorf("heed/kernels: HEED_DOTSOFTMAX_PF=%q: want 0, 1, 2 or 4; ignored, using %d", v, dotSoftmaxFarPF))
	}
}

type dotSoftmaxKernelFunc = func(ctx, scores, a []float32, lda int, h []float32, m, l float32) (float32, float32, int)

// dotSoftmaxFarKernels are the far kernels by ISA (avx2, avx512 in YMM,
// avx512 in ZMM) and prefetch distance (0, 1, 2, 4 blocks).
var dotSoftmaxFarKernels = [3][4]dotSoftmaxKernelFunc{
	{dotSoftmaxMatTVecFarAVX2, dotSoftmaxMatTVecFarPF1AVX2, dotSoftmaxMatTVecFarPF2AVX2, dotSoftmaxMatTVecFarPF4AVX2},
	{dotSoftmaxMatTVecFarAVX512, dotSoftmaxMatTVecFarPF1AVX512, dotSoftmaxMatTVecFarPF2AVX512, dotSoftmaxMatTVecFarPF4AVX512},
	{dotSoftmaxMatTVecFarAVX512Z, dotSoftmaxMatTVecFarPF1AVX512Z, dotSoftmaxMatTVecFarPF2AVX512Z, dotSoftmaxMatTVecFarPF4AVX512Z},
}

// dotSoftmaxFarAhead makes the far kernel, on AVX-512, the variant that
// scores each block before it adds the previous block's context (and
// prefetches one block ahead), whatever dotSoftmaxFarPF says.
// HEED_DOTSOFTMAX_AHEAD=1 sets it, for benchmarking; no CPU takes it by
// default (asmgen/DESIGN.md).
var dotSoftmaxFarAhead bool

func init() {
	switch v := strings.TrimSpace(os.Getenv("HEED_DOTSOFTMAX_AHEAD")); v {
	case "", "0":
	case "1":
		dotSoftmaxFarAhead = true
	default:
		envErrs = append(envErrs, fmt.Errorf("heed/kernels: HEED_DOTSOFTMAX_AHEAD=%q: want 0 or 1; ignored", v))
	}
}

// dotSoftmaxFarKernel returns the far kernel for the active ISA, the AVX-512
// width, dotSoftmaxFarAhead and dotSoftmaxFarPF.
func dotSoftmaxFarKernel() dotSoftmaxKernelFunc {
	if dotSoftmaxFarAhead && active == AVX512 {
		if zmm() {
			return dotSoftmaxMatTVecFarAheadPF1AVX512Z
		}
		return dotSoftmaxMatTVecFarAheadPF1AVX512
	}
	i := 0
	if active == AVX512 {
		i = 1
		if zmm() {
			i = 2
		}
	}
	return dotSoftmaxFarKernels[i][[5]int{0, 1, 2, 2, 3}[dotSoftmaxFarPF]]
}

// The GEMM micro-kernels of each ISA, with blocking sizes from this CPU's
// caches (kernels/GEMM.md gives the tile shapes' measurements).
var (
	gemmAVX2   = newGemmMicro(6, 16, gemmMicroAVX2, gemmMicroRowsAVX2)
	gemmAVX512 = newGemmMicro(6, 64, gemmMicroAVX512, gemmMicroRowsAVX512)
)

func newGemmMicro(mr, nr int, kern func(k int, a, b, c *float32, ldc int, alpha, beta float32),
	rows func(k int, a *float32, lda int, b, c *float32, ldc int, alpha, beta float32)) *gemmMicro {
	mk := &gemmMicro{mr: mr, nr: nr, kern: kern, rows: rows}
	l1, l2, l3 := cpuid.CPU.Cache.L1D, cpuid.CPU.Cache.L2, cpuid.CPU.Cache.L3
	if l1 <= 0 {
		l1 = 32 << 10
	}
	if l2 <= 0 {
		l2 = 1 << 20
	}
	if l3 <= 0 {
		l3 = 8 << 20
	}
	mk.gemmBlocking(l1, l2, l3)
	return mk
}

// gemmMicroFor returns the micro-kernel of isa, or nil for the fallback.
func gemmMicroFor(isa ISA) *gemmMicro {
	switch isa {
	case AVX512:
		return gemmAVX512
	case AVX2:
		return gemmAVX2
	}
	return nil
}

// The reduced-precision family (lowprec.go, lowprec_decode.go); LOWPREC.md
// explains the routes.

// hasF16C reports whether the AVX2 kernels may use VCVTPH2PS/VCVTPS2PH (every
// AVX-512 CPU has them in EVEX form).
var hasF16C = cpuid.CPU.Supports(cpuid.F16C)

// lowVec returns the number of leading elements of n that the active ISA's
// kernels of the reduced-precision family take (f16 tells whether the kernel
// needs F16C): all of them on AVX-512, whole vectors of 8 on AVX2, none on
// other ISAs.
func lowVec(n int, f16 bool) int {
	switch {
	case active == AVX512:
		return n
	case active == AVX2 && (hasF16C || !f16):
		return n &^ 7
	}
	return 0
}

func toBF16(dst []uint16, src []float32) {
	n := lowVec(len(src), false)
	if n > 0 {
		if active == AVX512 {
			toBF16AVX512(dst[:n], src[:n])
		} else {
			toBF16AVX2(dst[:n], src[:n])
		}
	}
	fallback.BF16s(dst[n:], src[n:])
}

func fromBF16(dst []float32, src []uint16) {
	n := lowVec(len(src), false)
	if n > 0 {
		if active == AVX512 {
			fromBF16AVX512(dst[:n], src[:n])
		} else {
			fromBF16AVX2(dst[:n], src[:n])
		}
	}
	fallback.FromBF16s(dst[n:], src[n:])
}

func toF16(dst []uint16, src []float32) {
	n := lowVec(len(src), true)
	if n > 0 {
		if active == AVX512 {
			toF16AVX512(dst[:n], src[:n])
		} else {
			toF16AVX2(dst[:n], src[:n])
		}
	}
	fallback.F16s(dst[n:], src[n:])
}

func fromF16(dst []float32, src []uint16) {
	n := lowVec(len(src), true)
	if n > 0 {
		if active == AVX512 {
			fromF16AVX512(dst[:n], src[:n])
		} else {
			fromF16AVX2(dst[:n], src[:n])
		}
	}
	fallback.FromF16s(dst[n:], src[n:])
}

// The decode kernels below take len(dst) ≥ 1 rows (columns for the
// transposed products) and len(x) ≥ 1 columns (rows).

func matVecBF16(dst []float32, a []uint16, lda int, x []float32) {
	n := lowVec(len(x), false)
	switch {
	case n > 0 && active == AVX512:
		matVecBF16AVX512(dst, a, lda, x)
		return
	case n > 0:
		matVecBF16AVX2(dst, a, lda, x[:n])
	default:
		clear(dst)
	}
	if n < len(x) {
		matVecHalfTail(dst, a, lda, x, n, fallback.Float32FromBF16)
	}
}

func matVecF16(dst []float32, a []uint16, lda int, x []float32) {
	n := lowVec(len(x), true)
	switch {
	case n > 0 && active == AVX512:
		matVecF16AVX512(dst, a, lda, x)
		return
	case n > 0:
		matVecF16AVX2(dst, a, lda, x[:n])
	default:
		clear(dst)
	}
	if n < len(x) {
		matVecHalfTail(dst, a, lda, x, n, fallback.Float32FromF16)
	}
}

func matTVecBF16(dst []float32, a []uint16, lda int, x []float32) {
	n := lowVec(len(dst), false)
	switch {
	case n > 0 && active == AVX512:
		matTVecBF16AVX512(dst, a, lda, x)
		return
	case n > 0:
		matTVecBF16AVX2(dst[:n], a, lda, x)
	}
	if n < len(dst) {
		fallback.MatTVecBF16(dst[n:], a[n:], lda, x)
	}
}

func matTVecF16(dst []float32, a []uint16, lda int, x []float32) {
	n := lowVec(len(dst), true)
	switch {
	case n > 0 && active == AVX512:
		matTVecF16AVX512(dst, a, lda, x)
		return
	case n > 0:
		matTVecF16AVX2(dst[:n], a, lda, x)
	}
	if n < len(dst) {
		fallback.MatTVecF16(dst[n:], a[n:], lda, x)
	}
}

// q8Whole returns the number of leading columns of n in whole 32-value blocks
// that the active ISA's Q8 kernels take.
func q8Whole(n int) int {
	if active == AVX512 || active == AVX2 {
		return n &^ (Q8BlockLen - 1)
	}
	return 0
}

func matVecQ8(dst []float32, a []Q8Block, lda int, x []float32) {
	n := q8Whole(len(x))
	switch {
	case active != AVX512 && active != AVX2:
		fallback.MatVecQ8(dst, a, lda, x)
		return
	case n > 0 && active == AVX512:
		matVecQ8AVX512(dst, q8Bytes(a), lda, x[:n])
	case n > 0:
		matVecQ8AVX2(dst, q8Bytes(a), lda, x[:n])
	default:
		clear(dst)
	}
	if n < len(x) {
		matVecQ8Tail(dst, a, lda, x, n)
	}
}

func matTVecQ8(dst []float32, a []Q8Block, lda int, x []float32) {
	n := q8Whole(len(dst))
	switch {
	case n > 0 && active == AVX512:
		matTVecQ8AVX512(dst[:n], q8Bytes(a), lda, x)
	case n > 0:
		matTVecQ8AVX2(dst[:n], q8Bytes(a), lda, x)
	}
	if n < len(dst) {
		fallback.MatTVecQ8(dst[n:], a[n/Q8BlockLen:], lda, x)
	}
}

// decodeStepPrefetch reports whether the fused step takes its prefetching
// variant for n rows of rowBytes bytes of keys and values: when they span
// more than dotSoftmaxFarBytes (this core's L2), unless a test forces it.
func decodeStepPrefetch(n, rowBytes int) bool {
	switch decodeStepKernel {
	case stepNear:
		return false
	case stepPF:
		return true
	}
	return n*rowBytes > dotSoftmaxFarBytes
}

// decodeStepAsm runs the fused step kernel of the active ISA over the leading
// whole blocks of eight rows, when the kernel takes the shapes (columns whole
// vectors of 8, whole 32-value blocks for Q8), and returns how many rows it
// took and false on a score that is not finite.
func decodeStepAsm(ctx, scores []float32, k, v stored, h []float32, st *SoftmaxState) (int, bool) {
	n := len(scores) &^ 7
	unit := 8
	if k.format == fmtQ8 {
		unit = Q8BlockLen
	}
	if n == 0 || len(h) == 0 || len(ctx) == 0 || len(h)%unit != 0 || len(ctx)%unit != 0 ||
		lowVec(8, k.format == fmtF16) != 8 {
		return 0, true
	}
	kb, kl := k.bytes()
	vb, vl := v.bytes()
	var r int
	z := active == AVX512 && zmm()
	pf := decodeStepPrefetch(n, kl+vl)
	switch {
	case k.format == fmtBF16 && z:
		if pf {
			st.Max, st.Sum, r = decodeStepBF16PFAVX512Z(ctx, scores[:n], kb, kl, vb, vl, h, st.Max, st.Sum)
		} else {
			st.Max, st.Sum, r = decodeStepBF16AVX512Z(ctx, scores[:n], kb, kl, vb, vl, h, st.Max, st.Sum)
		}
	case k.format == fmtBF16 && active == AVX512:
		if pf {
			st.Max, st.Sum, r = decodeStepBF16PFAVX512(ctx, scores[:n], kb, kl, vb, vl, h, st.Max, st.Sum)
		} else {
			st.Max, st.Sum, r = decodeStepBF16AVX512(ctx, scores[:n], kb, kl, vb, vl, h, st.Max, st.Sum)
		}
	case k.format == fmtBF16:
		if pf {
			st.Max, st.Sum, r = decodeStepBF16PFAVX2(ctx, scores[:n], kb, kl, vb, vl, h, st.Max, st.Sum)
		} else {
			st.Max, st.Sum, r = decodeStepBF16AVX2(ctx, scores[:n], kb, kl, vb, vl, h, st.Max, st.Sum)
		}
	case k.format == fmtF16 && z:
		if pf {
			st.Max, st.Sum, r = decodeStepF16PFAVX512Z(ctx, scores[:n], kb, kl, vb, vl, h, st.Max, st.Sum)
		} else {
			st.Max, st.Sum, r = decodeStepF16AVX512Z(ctx, scores[:n], kb, kl, vb, vl, h, st.Max, st.Sum)
		}
	case k.format == fmtF16 && active == AVX512:
		if pf {
			st.Max, st.Sum, r = decodeStepF16PFAVX512(ctx, scores[:n], kb, kl, vb, vl, h, st.Max, st.Sum)
		} else {
			st.Max, st.Sum, r = decodeStepF16AVX512(ctx, scores[:n], kb, kl, vb, vl, h, st.Max, st.Sum)
		}
	case k.format == fmtF16:
		if pf {
			st.Max, st.Sum, r = decodeStepF16PFAVX2(ctx, scores[:n], kb, kl, vb, vl, h, st.Max, st.Sum)
		} else {
			st.Max, st.Sum, r = decodeStepF16AVX2(ctx, scores[:n], kb, kl, vb, vl, h, st.Max, st.Sum)
		}
	case z:
		if pf {
			st.Max, st.Sum, r = decodeStepQ8PFAVX512Z(ctx, scores[:n], kb, kl, vb, vl, h, st.Max, st.Sum)
		} else {
			st.Max, st.Sum, r = decodeStepQ8AVX512Z(ctx, scores[:n], kb, kl, vb, vl, h, st.Max, st.Sum)
		}
	case active == AVX512:
		if pf {
			st.Max, st.Sum, r = decodeStepQ8PFAVX512(ctx, scores[:n], kb, kl, vb, vl, h, st.Max, st.Sum)
		} else {
			st.Max, st.Sum, r = decodeStepQ8AVX512(ctx, scores[:n], kb, kl, vb, vl, h, st.Max, st.Sum)
		}
	default:
		if pf {
			st.Max, st.Sum, r = decodeStepQ8PFAVX2(ctx, scores[:n], kb, kl, vb, vl, h, st.Max, st.Sum)
		} else {
			st.Max, st.Sum, r = decodeStepQ8AVX2(ctx, scores[:n], kb, kl, vb, vl, h, st.Max, st.Sum)
		}
	}
	return n, r == 0
}

// expShift sets w[i] = e^(s[i]−m) and returns Σ w[i], for s[i] ≤ m, none NaN.
func expShift(w, s []float32, m float32) float32 {
	n := lowVec(len(s), false)
	sum := float32(0)
	if n > 0 {
		if active == AVX512 {
			return expShiftAVX512(w, s, m)
		}
		sum = expShiftAVX2(w[:n], s[:n], m)
	}
	return sum + expShiftGo(w[n:], s[n:], m)
}

// Dispatch of the decoder-step families on amd64 (Sigmoid, Log, LogSoftmax).

func sigmoid(dst, x []float32) {
	switch active {
	case AVX512:
		sigmoidAVX512(dst, x)
	case AVX2:
		sigmoidAVX2(dst, x)
	default:
		fallback.Sigmoid(dst, x)
	}
}

func log(dst, x []float32) {
	switch active {
	case AVX512:
		logAVX512(dst, x)
	case AVX2:
		logAVX2(dst, x)
	default:
		fallback.Log(dst, x)
	}
}

// logSoftmax takes Max, then on rows with a finite maximum Σ e^(x−m) in one
// pass and (x − m) − ln Σ in another; other rows (NaN, ±Inf) go to fallback.
func logSoftmax(dst, x []float32) {
	if active == Generic || len(x) == 0 {
		fallback.LogSoftmax(dst, x)
		return
	}
	m := maxOf(x)
	if m-m != 0 { // ±Inf or NaN
		fallback.LogSoftmax(dst, x)
		return
	}
	var s float32
	if active == AVX512 {
		s = expSumAVX512(x, m)
	} else {
		s = expSumAVX2(x, m)
	}
	l := lnOne(s)
	if active == AVX512 {
		shift2AVX512(dst, x, m, l)
	} else {
		shift2AVX2(dst, x, m, l)
	}
}

// The element-wise kernels: dual-width on AVX-512, like scale and axpy.

func scaleTo(dst []float32, alpha float32, x []float32) {
	switch active {
	case AVX512:
		if zmm() {
			scaleToAVX512Z(dst, alpha, x)
		} else {
			scaleToAVX512(dst, alpha, x)
		}
	case AVX2:
		scaleToAVX2(dst, alpha, x)
	default:
		fallback.ScaleTo(dst, alpha, x)
	}
}

func addConstTo(dst []float32, c float32, x []float32) {
	switch active {
	case AVX512:
		if zmm() {
			addConstToAVX512Z(dst, c, x)
		} else {
			addConstToAVX512(dst, c, x)
		}
	case AVX2:
		addConstToAVX2(dst, c, x)
	default:
		fallback.AddConstTo(dst, c, x)
	}
}

func axpyTo(dst []float32, alpha float32, x, y []float32) {
	switch active {
	case AVX512:
		if zmm() {
			axpyToAVX512Z(dst, alpha, x, y)
		} else {
			axpyToAVX512(dst, alpha, x, y)
		}
	case AVX2:
		axpyToAVX2(dst, alpha, x, y)
	default:
		fallback.AxpyTo(dst, alpha, x, y)
	}
}

// binary picks the ISA's version of an element-wise kernel of two operands.
func binary(dst, x, y []float32, avx2, avx512, avx512z, generic func(dst, x, y []float32)) {
	switch active {
	case AVX512:
		if zmm() {
			avx512z(dst, x, y)
		} else {
			avx512(dst, x, y)
		}
	case AVX2:
		avx2(dst, x, y)
	default:
		generic(dst, x, y)
	}
}

func add(dst, x, y []float32) { binary(dst, x, y, addAVX2, addAVX512, addAVX512Z, fallback.Add) }
func sub(dst, x, y []float32) { binary(dst, x, y, subAVX2, subAVX512, subAVX512Z, fallback.Sub) }
func mul(dst, x, y []float32) { binary(dst, x, y, mulAVX2, mulAVX512, mulAVX512Z, fallback.Mul) }
func div(dst, x, y []float32) { binary(dst, x, y, divAVX2, divAVX512, divAVX512Z, fallback.Div) }

// firstAbove is TopK's scan: the smallest i with !(x[i] ≤ t), or len(x).
func firstAbove(x []float32, t float32) int {
	switch active {
	case AVX512:
		return firstAboveAVX512(x, t)
	case AVX2:
		return firstAboveAVX2(x, t)
	}
	return firstAboveBlocks(x, t)
}

// dotSoftmaxFarSplit, when not "0", makes the far kernel, on AVX-512, the
// variant of dotSoftmaxSplits it names, which reads the rows as that many
// streams (dotSoftmaxMatTVecFarSplit*): the rows in parts, a block of each
// scored together, each part read in address order, with the one running
// state. The choice by CPU is defaultDotSoftmaxFarSplit;
// HEED_DOTSOFTMAX_SPLIT (a name in dotSoftmaxSplits) overrides it for
// benchmarking.
var dotSoftmaxFarSplit = defaultDotSoftmaxFarSplit(cpuid.CPU.VendorID)

// dotSoftmaxSplit is a split far kernel: its name (HEED_DOTSOFTMAX_SPLIT),
// its number of parts (the rows it takes are a multiple of 8·parts), and
// the kernel in YMM and in ZMM vectors.
type dotSoftmaxSplit struct {
	name     string
	parts    int
	ymm, zmm dotSoftmaxKernelFunc
}

// dotSoftmaxSplits are the split far kernels: "0" is none (the one-stream
// kernel); "2" two streams, prefetching one block ahead in each when
// dotSoftmaxFarPF is not 0 (kernels/DESIGN.md has why one), none otherwise;
// "4", "6", "8" that many streams, each line also prefetched (PREFETCHT0)
// one block ahead in its part; "4-pf2" two blocks ahead; "8-t2" with
// PREFETCHT2 (into L2).
var dotSoftmaxSplits = []dotSoftmaxSplit{
	{"0", 0, nil, nil},
	{"2", 2, dotSoftmaxMatTVecFarSplitPF1AVX512, dotSoftmaxMatTVecFarSplitPF1AVX512Z},
	{"4", 4, dotSoftmaxMatTVecFarSplit4PF1AVX512, dotSoftmaxMatTVecFarSplit4PF1AVX512Z},
	{"4-pf2", 4, dotSoftmaxMatTVecFarSplit4PF2AVX512, dotSoftmaxMatTVecFarSplit4PF2AVX512Z},
	{"6", 6, dotSoftmaxMatTVecFarSplit6PF1AVX512, dotSoftmaxMatTVecFarSplit6PF1AVX512Z},
	{"8", 8, dotSoftmaxMatTVecFarSplit8PF1AVX512, dotSoftmaxMatTVecFarSplit8PF1AVX512Z},
	{"8-t2", 8, dotSoftmaxMatTVecFarSplit8PF1T2AVX512, dotSoftmaxMatTVecFarSplit8PF1T2AVX512Z},
}

// defaultDotSoftmaxFarSplit is dotSoftmaxFarSplit's rule: "4" (four
// streams) on Intel, where one core's bandwidth from memory grows with the
// number of streams the L2 prefetcher follows; "0" (one stream) elsewhere,
// as on Zen 4, where the one-stream kernel streamed near the memory ceiling
// (the split kernels have not been measured there). kernels/DESIGN.md has
// the measurements.
func defaultDotSoftmaxFarSplit(vendor cpuid.Vendor) string {
	if vendor == cpuid.Intel {
		return "4"
	}
	return "0"
}

func init() {
	v := strings.TrimSpace(os.Getenv("HEED_DOTSOFTMAX_SPLIT"))
	switch {
	case v == "":
	case slices.ContainsFunc(dotSoftmaxSplits, func(k dotSoftmaxSplit) bool { return k.name == v }):
		dotSoftmaxFarSplit = v
	default:
		names := make([]string, len(dotSoftmaxSplits))
		for i, k := range dotSoftmaxSplits {
			names[i] = k.name
		}
		envErrs = append(envErrs, fmt.Errorf("heed/kernels: HEED_DOTSOFTMAX_SPLIT=%q: want one of %s; ignored, using %s", v, strings.Join(names, ", "), dotSoftmaxFarSplit))
	}
}

// dotSoftmaxSplitKernel returns the split far kernel dotSoftmaxFarSplit
// names for the AVX-512 width, and its number of parts (0 for none).
func dotSoftmaxSplitKernel() (dotSoftmaxKernelFunc, int) {
	i := slices.IndexFunc(dotSoftmaxSplits, func(k dotSoftmaxSplit) bool { return k.name == dotSoftmaxFarSplit })
	if i <= 0 {
		return nil, 0
	}
	k := dotSoftmaxSplits[i]
	switch {
	case k.parts == 2 && dotSoftmaxFarPF == 0 && zmm():
		return dotSoftmaxMatTVecFarSplitAVX512Z, 2
	case k.parts == 2 && dotSoftmaxFarPF == 0:
		return dotSoftmaxMatTVecFarSplitAVX512, 2
	case zmm():
		return k.zmm, k.parts
	}
	return k.ymm, k.parts
}

// The fused recurrent-cell passes (rnncell.go).

func lstmCell(hOut, cOut, gates, b, c []float32) {
	switch active {
	case AVX512:
		lstmCellAVX512(hOut, cOut, gates, b, c)
	case AVX2:
		lstmCellAVX2(hOut, cOut, gates, b, c)
	default:
		fallback.LSTMCell(hOut, cOut, gates, b, c)
	}
}

func gruCell(hOut, gates, nh, bx, bh, h []float32) {
	switch active {
	case AVX512:
		gruCellAVX512(hOut, gates, nh, bx, bh, h)
	case AVX2:
		gruCellAVX2(hOut, gates, nh, bx, bh, h)
	default:
		fallback.GRUCell(hOut, gates, nh, bx, bh, h)
	}
}
