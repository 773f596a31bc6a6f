//go:build !purego

package kernels

import (
	"math"
	"unsafe"

	"github.com/heedml/heed/internal/fallback"
	"github.com/klauspost/cpuid/v2"
)

// This file is the amd64 dispatch: CPU detection, the route table of the
// CPU classes, and for each kernel the switch on the active ISA that calls
// the generated assembly (stubs in *_stub_amd64.go) or package fallback.
// kernels/DESIGN.md explains the routes.

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

// cpuClass is a class of x86-64 microarchitectures that take the same kernel
// variants where the best one differs between CPUs: the key of the route
// table.
type cpuClass uint8

const (
	classOther cpuClass = iota // other vendors and AMD before family 19h
	classIntel                 // Intel: two 64-byte loads per cycle, full-width 512-bit FMA
	classZen4                  // AMD family 19h: 512-bit operations split into two 256-bit halves
	classZen5                  // AMD family 1Ah and later: full-width 512-bit datapath
)

var classNames = [...]string{classOther: "other", classIntel: "intel", classZen4: "zen4", classZen5: "zen5"}

func (c cpuClass) String() string { return classNames[c] }

// classOf files a CPU under its class by cpuid's vendor and family.
func classOf(vendor cpuid.Vendor, family int) cpuClass {
	switch {
	case vendor == cpuid.Intel:
		return classIntel
	case vendor == cpuid.AMD && family == 0x19:
		return classZen4
	case vendor == cpuid.AMD && family >= 0x1a:
		return classZen5
	}
	return classOther
}

// route holds what a CPU class takes where the kernels come in variants.
type route struct {
	// width is the vector width in bits (256 or 512) of the AVX-512 kernels
	// that come in both: Dot, Sum, Axpy, Scale, the element-wise kernels,
	// MatTVec, MatVecBatch, SoftmaxMatTVecAdd, DotSoftmaxMatTVec, the
	// reduced-precision steps and the element-wise backward kernels.
	// HEED_AVX512_WIDTH and UseAVX512Width override it for every family.
	width int
	// zmm lists the families that take 512 bits where width is 256.
	zmm families
	// streamsBelow: MatVec over an A beyond L2 whose rows are fewer than
	// streamsBelow bytes apart reads it as four chunks of rows side by side
	// (matVecSplit4PF1K, four streams, each prefetched 1 KiB ahead) instead
	// of four adjacent rows at a time (matVec), which are four streams
	// already once rows are a page apart; 0: never. streamsBelowAVX2 is the
	// same for the AVX2 kernels.
	streamsBelow, streamsBelowAVX2 int
	// dotFar is the fused dot step's kernel for rows beyond L2 (dotFarKind).
	dotFar dotFarKind
	// splitBelow: where dotFar is dotFarOne, rows fewer than splitBelow
	// bytes apart take dotFarSplit instead; 0: none.
	splitBelow int
	// batchZMMCols: where zmm lists famMatVecBatch at width 256, MatVecBatch
	// takes its ZMM kernel only for A of at least this many columns (YMM's
	// shorter horizontal sums win on short rows); 0: at any.
	batchZMMCols int
	// nnBands lists the batches (rows of X) with which skinnyNN reads W in
	// bands of skinnyNNBand rows over all its columns, one kernel call each,
	// a strip's walk down a band reading its rows as that many streams in
	// address order, instead of one call down all of W (one group) or blocks
	// of skinnyNNCols columns (more). With nnBandsBeyondL3 only over a W
	// whose span exceeds memBytes (the L3), which cannot be hot in it.
	nnBands         batchSet
	nnBandsBeyondL3 bool
	// ntQuads lists the batches (rows of X) that skinnyNT takes in groups
	// of at most 4 with A left to the hardware prefetchers, without the
	// software prefetch of the next panel; the others take groups of 8 on
	// AVX-512 and the prefetch.
	ntQuads batchSet
	// ntPairs lists the batches (rows of X, within skinnyNTPairsLeast to
	// skinnyNTPairsGroup) that skinnyNT takes on AVX-512 in one group, in
	// tiles of two rows of A from two chunks (skinnyNTPairsAVX512), A read
	// once from memory with one group's prefetch (ntAhead), instead of
	// skinnyNT's tiles in two groups over panels in L2; ntQuads takes
	// precedence.
	// The 2-row tiles prefetch into L1 only: no route pairs them with pfL2
	// (TestRouteNTPairs).
	ntPairs batchSet
	// ntPanel lists the batches (rows of X) that skinnyNT takes on AVX-512
	// through the panel kernels (skinnyNTPanel): X packed transposed, tiles
	// of rows of A broadcast against it, no reduction; ntQuads and ntPairs
	// take precedence. Only where skinnyNTPanelTakes the shape.
	ntPanel batchSet
	// ntPanelLong lists the batches that skinnyNT takes through the panel
	// kernels as ntPanel's do, but only over A of at least ntPanelLongCols
	// columns: a two-vector panel costs all its lanes' work at any batch,
	// and the dot-product tiles' cost per row of X grows with the columns,
	// whose L2 panels (skinnyNTSteps) then hold fewer steps for every group
	// to pass over.
	ntPanelLong     batchSet
	ntPanelLongCols int
	// ntAhead is how far, in bytes of each of its chunks of A, skinnyNT's
	// prefetches run ahead of its loads when one group of rows of X reads
	// A (skinnyNTSteps): whole rows, at least one.
	ntAhead int
	// pfL2 makes the kernels that come in both levels (skinnyNT, the
	// reduced-precision steps' prefetching variants, MatVec's four-stream
	// far kernel beyond L3, the fused dot step's dotFarSplit kernels)
	// prefetch into L2 (PREFETCHT1, the …L2 kernels) rather than L1
	// (PREFETCHT0).
	pfL2 bool
	// stepPF lists the reduced-precision formats whose fused step, over
	// keys and values beyond L2, takes its prefetching variant
	// (decodeStep<F>PF); the others keep the plain kernel, left to the
	// hardware prefetchers.
	stepPF formatSet
	// stepPasses lists the reduced-precision formats whose step, over keys
	// and values apart that span more than stepPassesFrom, goes in two
	// passes (decodeStepPasses) instead of the fused kernel.
	stepPasses formatSet
	// q8Stack makes the Q8 context kernels on AVX-512 (MatTVecQ8 and the
	// plain Q8 and Q8Q8 steps) multiply each row's weight by its block's
	// scale by VMULSS, stored to the stack and broadcast from there by each
	// FMA (the …Stack kernels), instead of as vectors (VMULPS of the weight,
	// broadcast once per block of rows, by the scale). The prefetching Q8
	// steps come in the form of the class that takes them: into L1 the
	// vector form, into L2 (pfL2) the stack form; TestRouteQ8Stack checks
	// that every route pairs them so.
	q8Stack bool
}

// batchSet is a set of batch sizes from 1 to 63, for the route's nnBands
// and ntQuads.
type batchSet uint64

// batches returns the set of the batch sizes lo to hi.
func batches(lo, hi int) batchSet { return batchSet(1<<(hi+1) - 1<<lo) }

// has reports whether s holds batch b.
func (s batchSet) has(b int) bool { return b < 64 && s&(1<<b) != 0 }

// formatSet is a set of reduced-precision formats, for the route's stepPF.
type formatSet uint8

// formatsOf returns the set of fs.
func formatsOf(fs ...Format) formatSet {
	var s formatSet
	for _, f := range fs {
		s |= 1 << f
	}
	return s
}

// has reports whether f is in s.
func (s formatSet) has(f Format) bool { return s&(1<<f) != 0 }

// families is a set of the dual-width kernels' families, for the route's
// zmm.
type families uint8

const (
	famVector      families = 1 << iota // Sum, Axpy, Scale, element-wise, backward
	famDot                              // Dot
	famMatVecBatch                      // MatVecBatch (and its switch to Gemm)
	famStep                             // DotSoftmaxMatTVec and the reduced-precision steps (but famStepF16)
	famMatTVec                          // MatTVec, MatTVecAdd, SoftmaxMatTVecAdd's context pass
	famStepF16                          // the float16 step's plain kernel, within L2 (stepFamily)
)

// dotFarKind names DotSoftmaxMatTVec's kernel for rows that span more than
// farBytes.
type dotFarKind uint8

const (
	// dotFarOne: one stream, left to the hardware prefetcher
	// (dotSoftmaxMatTVecFar).
	dotFarOne dotFarKind = iota
	// dotFarSplit: on AVX-512 the rows in multiples of 32 as four streams
	// (dotSoftmaxMatTVecFarSplit4PF1); the rest, and AVX2, one stream that
	// prefetches one block of eight rows ahead (dotSoftmaxMatTVecFarPF1).
	dotFarSplit
	// dotFarNear: the near kernel (dotSoftmaxMatTVec), as in cache; rows
	// a multiple of 4 KiB apart take dotFarOne.
	dotFarNear
)

// routes is the route table: one entry per CPU class. Intel's L2 prefetcher
// follows one stream per 4 KiB page, so its bandwidth from memory grows with
// the streams a kernel reads, and it runs 512-bit operations at full width.
// Zen 5 runs them at full width too; its MatVec from memory gains from four
// streams, its fused step from none (the near kernel's eight rows at a time
// keep its prefetchers ahead), its skinnyNN of more than one group of rows
// from bands, its skinnyNT of one group from prefetches 2 KiB ahead rather
// than 4, of 9 to 11 rows from one group in 2-row tiles rather than two
// in 3-row tiles, and of 12 to 16 and 25 to 32 (19 to 24 over rows of 1024
// columns or more) from panels of X. Zen 4 splits 512-bit operations in halves and
// loads 64 bytes per cycle at any width, so YMM is as fast with shorter
// horizontal sums where a kernel is load-bound, but its Dot, MatVecBatch,
// MatTVec and fused steps, whose ZMM variants keep more independent work
// per instruction, run faster in ZMM, but for the float16 step within L2
// (a 512-bit VCVTPH2PS costs more than two 256-bit ones); from memory its
// MatVec and fused dot step gain from four streams where rows are short (in
// L3 they lose some of it), and its software prefetches gain where they
// fill L2 and lose where they fill L1 (the reduced-precision steps, the
// skinny products); it multiplies the Q8 context's weights by their scales
// as scalars (a 512-bit VMULPS costs it two halves), where Zen 5 loses more
// to the stores it takes.
// DESIGN.md gives the measurements behind each entry.
var routes = [...]route{
	classOther: {width: 256, dotFar: dotFarOne, ntAhead: 4 << 10, stepPF: allFormats},
	classIntel: {width: 512, streamsBelow: anyRow, streamsBelowAVX2: anyRow, dotFar: dotFarSplit, ntAhead: 4 << 10, stepPF: allFormats},
	classZen4:  {width: 256, zmm: famDot | famMatVecBatch | famStep | famMatTVec, streamsBelow: 4096, dotFar: dotFarOne, splitBelow: 1024, batchZMMCols: 256, nnBands: batches(1, 16), ntQuads: batches(1, 4), ntAhead: 4 << 10, pfL2: true, stepPF: allFormats, stepPasses: formatsOf(FormatBF16, FormatF16), q8Stack: true},
	classZen5:  {width: 512, streamsBelow: anyRow, streamsBelowAVX2: anyRow, dotFar: dotFarNear, nnBands: batches(9, 32), nnBandsBeyondL3: true, ntPairs: batches(9, 11), ntPanel: batches(12, 16) | batches(25, 32), ntPanelLong: batches(19, 24), ntPanelLongCols: 1024, ntAhead: 2 << 10, stepPF: allFormats},
}

// anyRow is a streamsBelow that takes rows any distance apart.
const anyRow = maxInt

// allFormats is every reduced-precision format.
var allFormats = formatsOf(FormatBF16, FormatF16, FormatQ8)

// hide returns s, its data hidden from escape analysis by noescape: the
// calls through the kernel tables below pass their slices through it, so
// that calling a kernel from a table keeps the kernel stubs' go:noescape
// contract (a call through a function value would make every argument
// escape, and a caller's stack buffer an allocation).
func hide[T any](s []T) []T {
	return unsafe.Slice((*T)(unsafe.Pointer(noescape((*byte)(unsafe.Pointer(unsafe.SliceData(s)))))), len(s))
}

// class and rt are this CPU's class and route, set once at start-up; tests
// set rt to each entry of routes in turn (forEachRoute).
var (
	class = classOf(cpuid.CPU.VendorID, cpuid.CPU.Family)
	rt    = routes[class]
)

// defaultAVX512Width is the route's width, before HEED_AVX512_WIDTH.
func defaultAVX512Width() int { return rt.width }

// zmm reports whether the dual-width AVX-512 kernels of family f take their
// ZMM variant, named with the suffix AVX512Z: at the width
// HEED_AVX512_WIDTH or UseAVX512Width forces, else at the route's.
func zmm(f families) bool {
	if avx512Width != 0 {
		return avx512Width == 512
	}
	return rt.width == 512 || rt.zmm&f != 0
}

// zmmBatch reports whether MatVecBatch over cols columns takes its ZMM
// kernel: zmm(famMatVecBatch), but for fewer than the route's batchZMMCols
// columns where only the route's zmm list gives the family 512 bits.
func zmmBatch(cols int) bool {
	if avx512Width != 0 || rt.width == 512 {
		return zmm(famMatVecBatch)
	}
	return zmm(famMatVecBatch) && cols >= rt.batchZMMCols
}

// l2Bytes returns the size of one core's L2 cache, or 1 MiB if cpuid cannot
// tell.
func l2Bytes() int {
	if n := cpuid.CPU.Cache.L2; n > 0 {
		return n
	}
	return 1 << 20
}

// l3Bytes is this core's last-level cache from cpuid, 32 MiB if unknown.
func l3Bytes() int {
	if n := cpuid.CPU.Cache.L3; n > 0 {
		return n
	}
	return 32 << 20
}

func dot(x, y []float32) float32 {
	switch active {
	case AVX512:
		if zmm(famDot) {
			return dotAVX512Z(x, y)
		}
		return dotAVX512(x, y)
	case AVX2:
		return dotAVX2(x, y)
	}
	return fallback.Dot(x, y)
}

func axpy(alpha float32, x, y []float32) {
	checkAxpyArgs(x, y)
	switch active {
	case AVX512:
		if zmm(famVector) {
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
		if zmm(famVector) {
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
		if zmm(famVector) {
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
	below := streamsFor(active)
	switch {
	case active == AVX512 && matVecFar(len(dst), lda, len(x), below) && matVecL2(len(dst), lda):
		matVecSplit4PF1KL2AVX512(dst, a, lda, x)
	case active == AVX512 && matVecFar(len(dst), lda, len(x), below):
		matVecSplit4PF1KAVX512(dst, a, lda, x)
	case active == AVX512:
		matVecAVX512(dst, a, lda, x)
	case active == AVX2 && matVecFar(len(dst), lda, len(x), below) && matVecL2(len(dst), lda):
		matVecSplit4PF1KL2AVX2(dst, a, lda, x)
	case active == AVX2 && matVecFar(len(dst), lda, len(x), below):
		matVecSplit4PF1KAVX2(dst, a, lda, x)
	case active == AVX2:
		matVecAVX2(dst, a, lda, x)
	default:
		fallback.MatVec(dst, a, lda, x)
	}
}

// farBytes is the span of a matrix beyond which MatVec and DotSoftmaxMatTVec
// take their far kernels: this core's L2.
var farBytes = l2Bytes()

// matVecFar reports whether matVec of rows×cols at stride lda reads A as
// four streams: A spans more than farBytes, cols ≥ 8 (the AVX2 kernel's
// tails reload a whole vector), and rows lda floats apart are fewer than
// below bytes apart (the route's streamsBelow of the ISA), or the route
// prefetches them into L2 (matVecL2: beyond the L3, rows any distance
// apart).
func matVecFar(rows, lda, cols, below int) bool {
	return cols >= 8 && rows*lda*4 > farBytes && (4*lda < below || matVecL2(rows, lda))
}

// streamsFor is the route's streamsBelow for the MatVec kernels of isa.
func streamsFor(isa ISA) int {
	if isa == AVX2 {
		return rt.streamsBelowAVX2
	}
	return rt.streamsBelow
}

// matVecL2 reports whether the four-stream MatVec of rows rows at stride lda
// prefetches into L2: where the route says pfL2 and A spans more than
// memBytes, the L3, so that it comes from memory; an A the L3 can hold may
// be hot there, where the prefetch into L1 is level with the plain kernel
// and the one into L2 slower (kernels/DESIGN.md).
func matVecL2(rows, lda int) bool { return rt.pfL2 && rows*lda*4 > memBytes }

// memBytes is the span beyond which a matrix cannot be in the caches
// (l3Bytes; tests set it to 0).
var memBytes = l3Bytes()

// The AVX2 matTVec, matVecBatch and softmaxMatTVec kernels need at least one
// full vector (8) of columns: their tails reload the last full vector.

func matTVec(dst, a []float32, lda int, x []float32) {
	switch {
	case active == AVX512 && zmm(famMatTVec):
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
	case active == AVX512 && zmmBatch(cols):
		matVecBatchAVX512Z(d, ldd, a, lda, x, ldx, rows, cols, batch)
	case active == AVX512:
		matVecBatchAVX512(d, ldd, a, lda, x, ldx, rows, cols, batch)
	case active == AVX2 && cols >= 8:
		matVecBatchAVX2(d, ldd, a, lda, x, ldx, rows, cols, batch)
	default:
		fallback.SkinnyNT(d, ldd, a, lda, x, ldx, rows, cols, batch, skinnyPanel(1, lda))
	}
}

func exp(dst, x []float32) {
	checkExpArgs(dst, x)
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
	checkTanhArgs(dst, x)
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
	checkSoftmaxArgs(dst, x)
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

// softmaxMatTVec is SoftmaxMatTVecAdd for len(x) ≥ 1 and len(dst) ≥ 1. A row
// whose max is not finite or that holds a NaN is finished by the Go softmax
// and then given its context.
func softmaxMatTVec(dst, a []float32, lda int, x []float32) {
	var st int
	switch {
	case active == AVX512 && zmm(famMatTVec):
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

// dotSoftmaxKernel, when not kernelBySpan, makes DotSoftmaxMatTVec take that
// kernel at every size (for tests).
var dotSoftmaxKernel = kernelBySpan

const (
	kernelBySpan = iota // far beyond farBytes or for rows 4 KiB apart
	kernelNear
	kernelFar
)

// dotSoftmaxFar returns DotSoftmaxMatTVec's kernel kind for n rows of
// stride lda: the route's far kind (dotFar, or dotFarSplit where that is
// dotFarOne and rows are fewer than splitBelow bytes apart) when they span
// more than farBytes, dotFarOne when they are a multiple of 4 KiB apart
// (rows that share L1 sets), and dotFarNear otherwise. Under kernelFar the
// route's far kind, dotFarOne for a route whose dotFar is dotFarNear.
func dotSoftmaxFar(n, lda int) dotFarKind {
	far := rt.dotFar
	if far == dotFarOne && 4*lda < rt.splitBelow {
		far = dotFarSplit
	}
	switch dotSoftmaxKernel {
	case kernelNear:
		return dotFarNear
	case kernelFar:
		if far == dotFarNear {
			return dotFarOne
		}
		return far
	}
	aliased := lda%1024 == 0
	switch {
	case n*lda*4 <= farBytes && !aliased:
		return dotFarNear
	case aliased && far == dotFarNear:
		return dotFarOne
	}
	return far
}

type dotSoftmaxKernelFunc = func(ctx, scores, a []float32, lda int, h []float32, m, l float32) (float32, float32, int)

// dotSoftmaxKernels are the fused step's kernels by ISA and width (avx2,
// avx512 in YMM, avx512 in ZMM): near (A in L2 or L3), far without and with
// a prefetch one block ahead into L1 and into L2 (A from memory), and on
// AVX-512 the four-stream kernel prefetching into L1 and into L2.
var dotSoftmaxKernels = [3]struct{ near, far, farPF, farPFL2, split, splitL2 dotSoftmaxKernelFunc }{
	{dotSoftmaxMatTVecAVX2, dotSoftmaxMatTVecFarAVX2, dotSoftmaxMatTVecFarPF1AVX2, dotSoftmaxMatTVecFarPF1L2AVX2, nil, nil},
	{dotSoftmaxMatTVecAVX512, dotSoftmaxMatTVecFarAVX512, dotSoftmaxMatTVecFarPF1AVX512, dotSoftmaxMatTVecFarPF1L2AVX512,
		dotSoftmaxMatTVecFarSplit4PF1AVX512, dotSoftmaxMatTVecFarSplit4PF1L2AVX512},
	{dotSoftmaxMatTVecAVX512Z, dotSoftmaxMatTVecFarAVX512Z, dotSoftmaxMatTVecFarPF1AVX512Z, dotSoftmaxMatTVecFarPF1L2AVX512Z,
		dotSoftmaxMatTVecFarSplit4PF1AVX512Z, dotSoftmaxMatTVecFarSplit4PF1L2AVX512Z},
}

// widthIndex is the index of the active ISA and AVX-512 width in the
// kernel tables: 0 for AVX2, 1 for AVX-512 in YMM, 2 in ZMM.
func widthIndex(f families) int {
	switch {
	case active == AVX512 && zmm(f):
		return 2
	case active == AVX512:
		return 1
	}
	return 0
}

// dotSoftmaxMatTVec is DotSoftmaxMatTVec for len(scores) ≥ 1 and len(ctx) ≥ 1:
// the assembly for the whole blocks of eight rows when the columns are whole
// vectors of 8, dotSoftmaxRows for the rest; the kernel as dotSoftmaxFar
// says.
func dotSoftmaxMatTVec(ctx, scores, a []float32, lda int, h []float32, st *SoftmaxState) bool {
	n := 0
	if (active == AVX2 || active == AVX512) && len(ctx)%8 == 0 {
		n = len(scores) &^ 7
		if n > 0 {
			ks := &dotSoftmaxKernels[widthIndex(famStep)]
			kind := dotSoftmaxFar(n, lda)
			kernel, split := ks.near, ks.split
			switch {
			case kind == dotFarOne:
				kernel = ks.far
			case kind == dotFarSplit && rt.pfL2:
				kernel, split = ks.farPFL2, ks.splitL2
			case kind == dotFarSplit:
				kernel = ks.farPF
			}
			n4 := 0
			if kind == dotFarSplit && active == AVX512 {
				n4 = n &^ 31
			}
			var r int
			if n4 > 0 {
				if st.Max, st.Sum, r = split(hide(ctx), hide(scores[:n4]), hide(a), lda, hide(h), st.Max, st.Sum); r != 0 {
					return false
				}
			}
			if n4 < n {
				if st.Max, st.Sum, r = kernel(hide(ctx), hide(scores[n4:n]), hide(a[n4*lda:]), lda, hide(h), st.Max, st.Sum); r != 0 {
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

// The GEMM micro-kernels of each ISA, with blocking sizes from this CPU's
// caches (kernels/DESIGN.md, "GEMM", gives the reasons for the tile shapes).
var (
	gemmAVX2   = newGemmMicro(6, 16, gemmMicroAVX2, gemmMicroRowsAVX2)
	gemmAVX512 = newGemmMicro(6, 64, gemmMicroAVX512, gemmMicroRowsAVX512)
)

func newGemmMicro(mr, nr int, kern func(k int, a, b, c *float32, ldc int, alpha, beta float32), rows gemmRowsKernel) *gemmMicro {
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

// The reduced-precision family (lowprec.go, lowprec_decode.go);
// kernels/DESIGN.md ("Reduced-precision formats") explains the routes.

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
		fallback.MatVecQ8(dst, fq8(a), lda, x)
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
	case n > 0 && active == AVX512 && rt.q8Stack:
		matTVecQ8StackAVX512(dst[:n], q8Bytes(a), lda, x)
	case n > 0 && active == AVX512:
		matTVecQ8AVX512(dst[:n], q8Bytes(a), lda, x)
	case n > 0:
		matTVecQ8AVX2(dst[:n], q8Bytes(a), lda, x)
	}
	if n < len(dst) {
		fallback.MatTVecQ8(dst[n:], fq8(a[n/Q8BlockLen:]), lda, x)
	}
}

// stepPassesFrom is the span of keys and values beyond which the route's
// stepPasses formats take the two passes: a quarter of L3 from cpuid, as
// skinnyBytes (keys and values that steps reuse stay in L3 below it, where
// the fused kernel is faster).
var stepPassesFrom = l3Bytes() / 4

// stepPassesFor reports whether a step in format f over keys and values of
// bytes bytes goes in two passes (route.stepPasses).
func stepPassesFor(f Format, bytes int) bool {
	return rt.stepPasses.has(f) && bytes > stepPassesFrom
}

// decodeStepVariant returns the fused step's variant over keys and values
// in format f for n rows of rowBytes bytes of keys and values: 1 or 2 (the
// prefetching kernel, into L1 or, where the route says pfL2, L2) when they
// span more than farBytes (this core's L2) and the route prefetches f
// (route.stepPF), else 0 (the plain kernel), unless a test forces one.
func decodeStepVariant(f Format, n, rowBytes int) int {
	switch decodeStepKernel {
	case stepNear:
		return 0
	case stepPF:
		return 1
	case stepPFL2:
		return 2
	}
	if n*rowBytes <= farBytes || !rt.stepPF.has(f) {
		return 0
	}
	if rt.pfL2 {
		return 2
	}
	return 1
}

type decodeStepFunc = func(ctx, scores []float32, k []byte, kl int, v []byte, vl int, h []float32, m, l float32) (float32, float32, int)

// stepPlainStack is the index in decodeSteps and decodeStepsQ8Q8 of the
// plain Q8 kernels in the stack form (route.q8Stack), beside
// decodeStepVariant's three.
const stepPlainStack = 3

// stepKernel returns the index in decodeSteps and decodeStepsQ8Q8 of the
// kernel for variant (decodeStepVariant) over format f: the stack form's
// plain kernel where the route takes it for Q8 on AVX-512, else variant.
func stepKernel(f Format, variant int) int {
	if variant == 0 && f == FormatQ8 && active == AVX512 && rt.q8Stack {
		return stepPlainStack
	}
	return variant
}

// decodeSteps are the fused step kernels of the reduced-precision formats by
// format (FormatBF16, FormatF16, FormatQ8), ISA and width (widthIndex) and
// kernel (stepKernel): plain, prefetching into L1, into L2, and for Q8 on
// AVX-512 the plain one in the stack form (route.q8Stack; its prefetching
// ones in their class's form).
var decodeSteps = [FormatQ8 + 1][3][4]decodeStepFunc{
	FormatBF16: {
		{decodeStepBF16AVX2, decodeStepBF16PFAVX2, decodeStepBF16PFL2AVX2},
		{decodeStepBF16AVX512, decodeStepBF16PFAVX512, decodeStepBF16PFL2AVX512},
		{decodeStepBF16AVX512Z, decodeStepBF16PFAVX512Z, decodeStepBF16PFL2AVX512Z},
	},
	FormatF16: {
		{decodeStepF16AVX2, decodeStepF16PFAVX2, decodeStepF16PFL2AVX2},
		{decodeStepF16AVX512, decodeStepF16PFAVX512, decodeStepF16PFL2AVX512},
		{decodeStepF16AVX512Z, decodeStepF16PFAVX512Z, decodeStepF16PFL2AVX512Z},
	},
	FormatQ8: {
		{decodeStepQ8AVX2, decodeStepQ8PFAVX2, decodeStepQ8PFL2AVX2},
		{decodeStepQ8AVX512, decodeStepQ8PFAVX512, decodeStepQ8StackPFL2AVX512, decodeStepQ8StackAVX512},
		{decodeStepQ8AVX512Z, decodeStepQ8PFAVX512Z, decodeStepQ8StackPFL2AVX512Z, decodeStepQ8StackAVX512Z},
	},
}

// stepFamily is the width family of the fused step over format f in variant
// (decodeStepVariant): famStepF16 for float16's plain kernel, else famStep.
func stepFamily(f Format, variant int) families {
	if f == FormatF16 && variant == 0 {
		return famStepF16
	}
	return famStep
}

// decodeStepAsm runs the fused step kernel of the active ISA over the leading
// whole blocks of eight rows, when the kernel takes the shapes (columns whole
// vectors of 8, whole 32-value blocks for Q8), and returns how many rows it
// took and false on a score that is not finite.
func decodeStepAsm(ctx, scores []float32, k, v Stored, h []float32, st *SoftmaxState) (int, bool) {
	n := len(scores) &^ 7
	unit := 8
	if k.format == FormatQ8 {
		unit = Q8BlockLen
	}
	if n == 0 || len(h) == 0 || len(ctx) == 0 || len(h)%unit != 0 || len(ctx)%unit != 0 ||
		lowVec(8, k.format == FormatF16) != 8 {
		return 0, true
	}
	kb, kl := k.bytes()
	vb, vl := v.bytes()
	var r int
	variant := decodeStepVariant(k.format, n, kl+vl)
	st.Max, st.Sum, r = decodeSteps[k.format][widthIndex(stepFamily(k.format, variant))][stepKernel(k.format, variant)](hide(ctx), hide(scores[:n]), hide(kb), kl, hide(vb), vl, hide(h), st.Max, st.Sum)
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
	checkScaleArgs(dst, x)
	switch active {
	case AVX512:
		if zmm(famVector) {
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
		if zmm(famVector) {
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
		if zmm(famVector) {
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

// The element-wise kernels of two operands, by direct calls (a kernel
// passed as a function value would make its slices escape).

func add(dst, x, y []float32) {
	switch {
	case active == AVX512 && zmm(famVector):
		addAVX512Z(dst, x, y)
	case active == AVX512:
		addAVX512(dst, x, y)
	case active == AVX2:
		addAVX2(dst, x, y)
	default:
		fallback.Add(dst, x, y)
	}
}

func sub(dst, x, y []float32) {
	switch {
	case active == AVX512 && zmm(famVector):
		subAVX512Z(dst, x, y)
	case active == AVX512:
		subAVX512(dst, x, y)
	case active == AVX2:
		subAVX2(dst, x, y)
	default:
		fallback.Sub(dst, x, y)
	}
}

func mul(dst, x, y []float32) {
	switch {
	case active == AVX512 && zmm(famVector):
		mulAVX512Z(dst, x, y)
	case active == AVX512:
		mulAVX512(dst, x, y)
	case active == AVX2:
		mulAVX2(dst, x, y)
	default:
		fallback.Mul(dst, x, y)
	}
}

func div(dst, x, y []float32) {
	switch {
	case active == AVX512 && zmm(famVector):
		divAVX512Z(dst, x, y)
	case active == AVX512:
		divAVX512(dst, x, y)
	case active == AVX2:
		divAVX2(dst, x, y)
	default:
		fallback.Div(dst, x, y)
	}
}

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

// matVecBatchGemmBatch returns the smallest batch that MatVecBatch takes to
// Gemm under the active ISA (matVecBatchGemmMin), or 0 for none.
func matVecBatchGemmBatch() int {
	switch {
	case active == AVX2:
		return matVecBatchGemmMin.avx2
	case active == AVX512 && zmm(famMatVecBatch):
		return matVecBatchGemmMin.avx512zmm
	case active == AVX512:
		return matVecBatchGemmMin.avx512ymm
	}
	return 0
}

func init() {
	// Both x86 micro-kernels pack op(B) = Bᵀ with the 8×8 register transpose
	// (VEX encoded, so it runs on every AVX2 CPU).
	gemmAVX2.transpose8 = gemmTranspose8AVX2
	gemmAVX512.transpose8 = gemmTranspose8AVX2
	// Both pack the full panels of a transposed op(A) with VEX moves.
	gemmAVX2.packAT6 = gemmPackAT6AVX2
	gemmAVX512.packAT6 = gemmPackAT6AVX2
	// Both read whole panels of a B as is in place for PackedB.Ref.
	gemmAVX2.strided, gemmAVX2.rowsStrided = gemmMicroStridedBAVX2, gemmMicroRowsStridedBAVX2
	gemmAVX512.strided, gemmAVX512.rowsStrided = gemmMicroStridedBAVX512, gemmMicroRowsStridedBAVX512
	// Both have GemmPacked's skinny route, prefetching into L1 or L2.
	gemmAVX2.skinny = [2][]gemmSkinnyKernel{
		{gemmSkinny1AVX2, gemmSkinny2AVX2, gemmSkinny3AVX2, gemmSkinny4AVX2, gemmSkinny5AVX2, gemmSkinny6AVX2},
		{gemmSkinny1L2AVX2, gemmSkinny2L2AVX2, gemmSkinny3L2AVX2, gemmSkinny4L2AVX2, gemmSkinny5L2AVX2, gemmSkinny6L2AVX2}}
	gemmAVX512.skinny = [2][]gemmSkinnyKernel{
		{gemmSkinny1AVX512, gemmSkinny2AVX512, gemmSkinny3AVX512, gemmSkinny4AVX512, gemmSkinny5AVX512, gemmSkinny6AVX512},
		{gemmSkinny1L2AVX512, gemmSkinny2L2AVX512, gemmSkinny3L2AVX512, gemmSkinny4L2AVX512, gemmSkinny5L2AVX512, gemmSkinny6L2AVX512}}
	// and the strided skinny route, its tiles of 6 rows the GEMM's.
	gemmAVX2.skinnyStrided = []gemmStridedKernel{gemmSkinnyStrided1AVX2, gemmSkinnyStrided2AVX2, gemmSkinnyStrided3AVX2, gemmSkinnyStrided4AVX2, gemmSkinnyStrided5AVX2, gemmMicroRowsStridedBAVX2}
	gemmAVX512.skinnyStrided = []gemmStridedKernel{gemmSkinnyStrided1AVX512, gemmSkinnyStrided2AVX512, gemmSkinnyStrided3AVX512, gemmSkinnyStrided4AVX512, gemmSkinnyStrided5AVX512, gemmMicroRowsStridedBAVX512}
}

// skinnyPackedL2 reports whether GemmPacked's skinny route prefetches into
// L2 (the route's pfL2).
func skinnyPackedL2() bool { return rt.pfL2 }

// The online softmax (onlinesoftmax.go).

// onlineSoftmax runs the assembly kernel of the active ISA; the others return
// softmaxSpecial, leaving the row to onlineSoftmaxGo. m is not NaN.
func onlineSoftmax(x []float32, m float32) (float32, float32, int) {
	switch active {
	case AVX512:
		return onlineSoftmaxAVX512(x, m)
	case AVX2:
		return onlineSoftmaxAVX2(x, m)
	}
	return 0, 0, softmaxSpecial
}

// onlineSoftmaxBand runs the band kernel of the active ISA and returns how
// many rows it left marked (sum NaN) and true; other ISAs return false.
// d is within [−x.Rows, x.Cols] and x.Cols > 0.
func onlineSoftmaxBand(x Matrix, d int, m, sum []float32) (int, bool) {
	switch active {
	case AVX512:
		return onlineSoftmaxBandAVX512(x.Data, x.Rows, x.Cols, x.Stride, d, m, sum), true
	case AVX2:
		return onlineSoftmaxBandAVX2(x.Data, x.Rows, x.Cols, x.Stride, d, m, sum), true
	}
	return 0, false
}

// The reduced-precision kernels with the query in 8-bit blocks (lowprec_q8q8.go).

// hasIntDot reports whether the CPU has the integer dot-product instruction
// the Q8Q8 kernels need on top of the AVX-512 ISA: AVX512_VNNI's VPDPBUSD.
var hasIntDot = cpuid.CPU.Supports(cpuid.AVX512VNNI)

// useIntDot selects the VPDPBUSD kernels of Q8Q8 when the ISA is AVX-512;
// tests clear it to run the Go path on a CPU that has them.
var useIntDot = hasIntDot

func intDotActive() bool { return useIntDot && active == AVX512 }

func matVecQ8Q8(dst []float32, a []Q8Block, lda int, x []Q8Block) {
	if intDotActive() {
		matVecQ8Q8AVX512(dst, q8Bytes(a), lda, q8Bytes(x))
		return
	}
	matVecQ8Q8Go(dst, a, lda, x)
}

type decodeStepQ8Q8Func = func(ctx, scores []float32, k []byte, kl int, v []byte, vl int, h []byte, m, l float32) (float32, float32, int)

// decodeStepsQ8Q8 are the fused Q8Q8 step kernels (AVX-512 only) by width
// (YMM, ZMM) and kernel (stepKernel), as decodeSteps.
var decodeStepsQ8Q8 = [2][4]decodeStepQ8Q8Func{
	{decodeStepQ8Q8AVX512, decodeStepQ8Q8PFAVX512, decodeStepQ8Q8StackPFL2AVX512, decodeStepQ8Q8StackAVX512},
	{decodeStepQ8Q8AVX512Z, decodeStepQ8Q8PFAVX512Z, decodeStepQ8Q8StackPFL2AVX512Z, decodeStepQ8Q8StackAVX512Z},
}

// decodeStepQ8Q8Asm is decodeStepAsm for the keys k (with the quantised query
// k.hq) and values v in 8-bit blocks: the fused kernel over the leading whole
// blocks of eight rows, when VPDPBUSD is there and len(ctx) is a multiple of
// 32.
func decodeStepQ8Q8Asm(ctx, scores []float32, k, v Stored, st *SoftmaxState) (int, bool) {
	n := len(scores) &^ 7
	if n == 0 || len(k.hq) == 0 || len(ctx) == 0 || len(ctx)%Q8BlockLen != 0 || !intDotActive() {
		return 0, true
	}
	kb, kl := k.bytes()
	vb, vl := v.bytes()
	hb := q8Bytes(k.hq)
	var r int
	st.Max, st.Sum, r = decodeStepsQ8Q8[min(widthIndex(famStep)-1, 1)][stepKernel(FormatQ8, decodeStepVariant(FormatQ8, n, kl+vl))](hide(ctx), hide(scores[:n]), hide(kb), kl, hide(vb), vl, hide(hb), st.Max, st.Sum)
	return n, r == 0
}

// fromQ8 is FromQ8 with the sizes checked: the whole blocks by the
// ISA's kernel, the last partial one in Go (the same product, bit for bit).
func fromQ8(dst []float32, src []Q8Block) {
	n := 0
	if active == AVX512 || active == AVX2 {
		n = len(dst) &^ (Q8BlockLen - 1)
	}
	switch {
	case n > 0 && active == AVX512:
		fromQ8AVX512(dst[:n], q8Bytes(src))
	case n > 0:
		fromQ8AVX2(dst[:n], q8Bytes(src))
	}
	fallback.DequantizeQ8(dst[n:], fq8(src[n/Q8BlockLen:]))
}

// toQ8Blocks is ToQ8 with the sizes checked: the whole blocks by the ISA's
// kernel, the last partial one in Go (the same bits).
func toQ8Blocks(dst []Q8Block, src []float32) {
	n := 0
	if active == AVX512 || active == AVX2 {
		n = len(src) &^ (Q8BlockLen - 1)
	}
	switch {
	case n > 0 && active == AVX512:
		toQ8AVX512(q8Bytes(dst), src[:n])
	case n > 0:
		toQ8AVX2(q8Bytes(dst), src[:n])
	}
	fallback.QuantizeQ8(fq8(dst[n/Q8BlockLen:]), src[n:])
}

// TopK's scans (topk.go).

// spanMaxima sets dst[j] to the largest element of span j of x (topKSpan
// elements each, len(x) ≥ topKSpan·len(dst)) and reports whether any element
// of those spans is NaN, in which case dst holds no meaningful maxima.
func spanMaxima(dst, x []float32) bool {
	_ = x[:len(dst)*topKSpan] // the kernels do not check len(x)
	switch active {
	case AVX512:
		return spanMaxAVX512(dst, x)
	case AVX2:
		// The AVX2 kernel's flag may be set without a NaN.
		return spanMaxAVX2(dst, x) && hasNaN(x[:len(dst)*topKSpan])
	}
	return spanMaxGo(dst, x)
}

// hasNaN reports whether x holds a NaN: firstAbove finds the first element
// not ≤ +Inf.
func hasNaN(x []float32) bool { return firstAbove(x, float32(math.Inf(1))) < len(x) }

// spanMaxKth is spanMaxima that also returns the k-th largest of the maxima
// (counting equal values), where a kernel takes it in the same pass (AVX-512
// for k ≤ 16, AVX2 for k ≤ 8); ok is false, and nothing done, elsewhere.
func spanMaxKth(dst, x []float32, k int) (kth float32, nan, ok bool) {
	_ = x[:len(dst)*topKSpan] // the kernels do not check len(x)
	switch {
	case active == AVX512 && 1 <= k && k <= 16:
		kth, nan = spanMaxKthAVX512(dst, x, k)
		return kth, nan, true
	case active == AVX2 && 1 <= k && k <= 8:
		kth, nan = spanMaxKthAVX2(dst, x, k)
		return kth, nan && hasNaN(x[:len(dst)*topKSpan]), true
	}
	return 0, false, false
}

// aboveAll stores the indices i of x with !(x[i] ≤ t), in increasing order,
// into dst and returns how many, or −1 if there are more than len(dst).
func aboveAll(dst []int32, x []float32, t float32) int {
	switch active {
	case AVX512:
		return aboveAllAVX512(dst, x, t)
	case AVX2:
		return aboveAllAVX2(dst, x, t)
	}
	return aboveAllGo(dst, x, t)
}

// kthLargest returns the k-th largest element of m, counting equal values:
// m free of NaN, len(m) a positive multiple of topKGroup, 1 ≤ k ≤
// min(len(m), 64). The assembly's work grows as len(m)².
func kthLargest(m []float32, k int) float32 {
	switch active {
	case AVX512:
		return kthLargestAVX512(m, k)
	case AVX2:
		return kthLargestAVX2(m, k)
	}
	return kthLargestGo(m, k)
}

// aboveSpans is aboveAll over every whole span j of x (topKSpan elements
// from j·topKSpan, j < len(x)/topKSpan) with !(bm[j] ≤ t), in increasing
// order of j, and then over the elements after the last whole span, the
// indices relative to x: it stores them into dst and returns how many, or −1
// if there are more than len(dst) (whose contents are then unspecified).
// len(bm) is a multiple of topKGroup, at least len(x)/topKSpan.
func aboveSpans(dst []int32, x []float32, bm []float32, t float32) int {
	switch active {
	case AVX512:
		return aboveSpansAVX512(dst, x, bm, t)
	case AVX2:
		return aboveSpansAVX2(dst, x, bm, t)
	}
	return aboveSpansGo(dst, x, bm, t)
}

// The recurrent cells' training passes (rnntrain.go).

func lstmCellTrain(hOut, cOut, act, gates, b, c []float32) {
	switch active {
	case AVX512:
		lstmCellTrainAVX512(hOut, cOut, act, gates, b, c)
	case AVX2:
		lstmCellTrainAVX2(hOut, cOut, act, gates, b, c)
	default:
		fallback.LSTMCellTrain(hOut, cOut, act, gates, b, c)
	}
}

func lstmCellBackward(dGates, dcPrev, act, cPrev, dh, dc []float32) {
	switch active {
	case AVX512:
		lstmCellBackwardAVX512(dGates, dcPrev, act, cPrev, dh, dc)
	case AVX2:
		lstmCellBackwardAVX2(dGates, dcPrev, act, cPrev, dh, dc)
	default:
		fallback.LSTMCellBackward(dGates, dcPrev, act, cPrev, dh, dc)
	}
}

func gruCellTrain(hOut, act, gates, nh, bx, bh, h []float32) {
	switch active {
	case AVX512:
		gruCellTrainAVX512(hOut, act, gates, nh, bx, bh, h)
	case AVX2:
		gruCellTrainAVX2(hOut, act, gates, nh, bx, bh, h)
	default:
		fallback.GRUCellTrain(hOut, act, gates, nh, bx, bh, h)
	}
}

func gruCellBackward(dGx, dGh, dhPrev, act, h, dh []float32) {
	switch active {
	case AVX512:
		gruCellBackwardAVX512(dGx, dGh, dhPrev, act, h, dh)
	case AVX2:
		gruCellBackwardAVX2(dGx, dGh, dhPrev, act, h, dh)
	default:
		fallback.GRUCellBackward(dGx, dGh, dhPrev, act, h, dh)
	}
}

// The backward kernels (backward.go, additive_backward.go). The streaming
// ones (softmax backward, the flash tile's dS, the activations) come in both
// AVX-512 widths; those bound by Exp or Tanh compute in ZMM.

// softmaxBackwardRows is SoftmaxBackwardRows for rows, cols ≥ 1.
func softmaxBackwardRows(dx, y, dy []float32, rows, cols, ldx, ldy, lddy int) {
	switch {
	case active == AVX512 && zmm(famVector):
		softmaxBackwardAVX512Z(dx, y, dy, rows, cols, ldx, ldy, lddy)
	case active == AVX512:
		softmaxBackwardAVX512(dx, y, dy, rows, cols, ldx, ldy, lddy)
	case active == AVX2:
		softmaxBackwardAVX2(dx, y, dy, rows, cols, ldx, ldy, lddy)
	default:
		softmaxBackwardRowsGo(dx, y, dy, rows, cols, ldx, ldy, lddy)
	}
}

// logSoftmaxBackwardRows is LogSoftmaxBackwardRows for rows, cols ≥ 1.
func logSoftmaxBackwardRows(dx, y, dy []float32, rows, cols, ldx, ldy, lddy int) {
	switch active {
	case AVX512:
		logSoftmaxBackwardAVX512(dx, y, dy, rows, cols, ldx, ldy, lddy)
	case AVX2:
		logSoftmaxBackwardAVX2(dx, y, dy, rows, cols, ldx, ldy, lddy)
	default:
		logSoftmaxBackwardRowsGo(dx, y, dy, rows, cols, ldx, ldy, lddy)
	}
}

func tanhBackward(dx, y, dy []float32) {
	switch {
	case active == AVX512 && zmm(famVector):
		tanhBackwardAVX512Z(dx, y, dy)
	case active == AVX512:
		tanhBackwardAVX512(dx, y, dy)
	case active == AVX2:
		tanhBackwardAVX2(dx, y, dy)
	default:
		fallback.TanhBackward(dx, y, dy)
	}
}

func sigmoidBackward(dx, y, dy []float32) {
	switch {
	case active == AVX512 && zmm(famVector):
		sigmoidBackwardAVX512Z(dx, y, dy)
	case active == AVX512:
		sigmoidBackwardAVX512(dx, y, dy)
	case active == AVX2:
		sigmoidBackwardAVX2(dx, y, dy)
	default:
		fallback.SigmoidBackward(dx, y, dy)
	}
}

// softmaxRecompute is SoftmaxRecompute for rows, cols ≥ 1 and d within
// [−rows, cols].
func softmaxRecompute(p, s []float32, rows, cols, ldp, lds, d int, scale float32, lse []float32) {
	switch active {
	case AVX512:
		softmaxRecomputeAVX512(p, s, rows, cols, ldp, lds, d, scale, lse)
	case AVX2:
		softmaxRecomputeAVX2(p, s, rows, cols, ldp, lds, d, scale, lse)
	default:
		fallback.SoftmaxRecompute(p, ldp, s, lds, rows, cols, scale, lse, d)
	}
}

// softmaxBackwardBlock is SoftmaxBackwardBlock for rows, cols ≥ 1.
func softmaxBackwardBlock(ds, p, dp []float32, rows, cols, ldds, ldp, lddp int, delta []float32) {
	switch {
	case active == AVX512 && zmm(famVector):
		softmaxBackwardBlockAVX512Z(ds, p, dp, rows, cols, ldds, ldp, lddp, delta)
	case active == AVX512:
		softmaxBackwardBlockAVX512(ds, p, dp, rows, cols, ldds, ldp, lddp, delta)
	case active == AVX2:
		softmaxBackwardBlockAVX2(ds, p, dp, rows, cols, ldds, ldp, lddp, delta)
	default:
		fallback.SoftmaxBackwardBlock(ds, ldds, p, ldp, dp, lddp, rows, cols, delta)
	}
}

// additiveScoreBackward is AdditiveScoreBackwardAdd for k.Rows, k.Cols ≥ 1;
// dk nil skips the key gradient. The AVX2 kernel needs a whole vector of
// columns: narrower rows go to fallback (the same bits).
func additiveScoreBackward(dq, dv, dk []float32, lddk int, k []float32, ldk int, q, v, ds []float32) {
	switch {
	case active == AVX512 && dk != nil:
		additiveScoreBackwardAVX512(dq, dv, dk, lddk, k, ldk, q, v, ds)
	case active == AVX512:
		additiveScoreBackwardNoDKAVX512(dq, dv, k, ldk, q, v, ds)
	case active == AVX2 && len(q) >= 8 && dk != nil:
		additiveScoreBackwardAVX2(dq, dv, dk, lddk, k, ldk, q, v, ds)
	case active == AVX2 && len(q) >= 8:
		additiveScoreBackwardNoDKAVX2(dq, dv, k, ldk, q, v, ds)
	default:
		fallback.AdditiveScoreBackwardAdd(dq, dv, dk, lddk, k, ldk, q, v, ds)
	}
}

// The loss over the vocabulary and the optimizer steps (crossentropy.go,
// optim.go).

func crossEntropyExp(dst, x []float32, t int, m, scale, shift float32) (sum, dsum, et float32) {
	switch active {
	case AVX512:
		return crossEntropyExpAVX512(dst, x, t, m, scale, shift)
	case AVX2:
		return crossEntropyExpAVX2(dst, x, t, m, scale, shift)
	}
	return fallback.CrossEntropyExp(dst, x, t, m, scale, shift)
}

func adamStep(p, g, m, v []float32, k *adamConsts) {
	switch active {
	case AVX512:
		adamStepAVX512(p, g, m, v, k.lr, k.b1, k.c1, k.b2, k.c2, k.rs, k.eps, k.wd, k.mode)
	case AVX2:
		adamStepAVX2(p, g, m, v, k.lr, k.b1, k.c1, k.b2, k.c2, k.rs, k.eps, k.wd, k.mode)
	default:
		fallback.AdamStep(p, g, m, v, k.lr, k.b1, k.c1, k.b2, k.c2, k.rs, k.eps, k.wd, k.mode)
	}
}

func sgdStep(p, g, b []float32, lr, mu, wd float32, mode int) {
	switch active {
	case AVX512:
		sgdStepAVX512(p, g, b, lr, mu, wd, mode)
	case AVX2:
		sgdStepAVX2(p, g, b, lr, mu, wd, mode)
	default:
		fallback.SGDStep(p, g, b, lr, mu, wd, mode)
	}
}

// skinnyL2 is the L2 size the skinny products are placed by.
func skinnyL2() int { return l2Bytes() }

// skinnyFrom is skinnyBytes: a quarter of the last-level cache as cpuid
// reports it, and at least L2. Below it a matrix that calls reuse stays in
// L3, where matVecBatch's 4×4 tiles over panels of 64 rows outrun the skinny
// kernels; beyond it the matrix comes from memory, which skinnyNT reads once
// per call (BenchmarkSkinnySpan).
func skinnyFrom() int {
	return max(l2Bytes(), cpuid.CPU.Cache.L3/4)
}

// skinnyNTTakes reports whether batch rows of X against the rows×cols A at
// stride lda take skinnyNT: 1 ≤ batch ≤ skinnyMaxRows, A beyond skinnyBytes,
// an AVX ISA, and on AVX2 at least 8 columns (its tails reload the last full
// vector).
func skinnyNTTakes(rows, cols, lda, batch int) bool {
	switch {
	case active == AVX512:
	case active == AVX2 && cols >= 8:
	default:
		return false
	}
	return batch >= 1 && batch <= skinnyMaxRows && skinnySpan(rows, cols, lda)
}

// skinnyNNTakes reports whether batch rows of X against the k×n W at stride
// ldw take skinnyNN: as skinnyNTTakes, with n in the place of the columns.
func skinnyNNTakes(k, n, ldw, batch int) bool { return skinnyNTTakes(k, n, ldw, batch) }

// skinnyNT sets D = α·X·Aᵀ + β·D (β = ±0: D not read) for the rows×cols A,
// batch×cols X and batch×rows D, under the ISA skinnyNTTakes accepted.
func skinnyNT(d []float32, ldd int, a []float32, lda int, x []float32, ldx int, rows, cols, batch int, alpha, beta float32) {
	q := rows / skinnyNTChunks
	group, lanes := 4, 8
	if active == AVX512 {
		group, lanes = 8, 16
	}
	quads := rt.ntQuads.has(batch)
	if quads {
		group = 4
	}
	if active == AVX512 && !quads && rt.ntPairs.has(batch) {
		// One group of 9 to 12 rows (TestRouteNTPairs), A in two chunks.
		skinnyNTPairsAVX512(d, ldd, a, lda, x, ldx, rows, rows/2, cols, batch,
			skinnyNTSteps(lda, 1, rt.ntAhead), skinnyWindow(cols/lanes, batch, batch), batch, 1, alpha, beta)
		return
	}
	if active == AVX512 && !quads && skinnyNTPanelRoute(cols, batch) && skinnyNTPanelTakes(cols, batch) {
		done := skinnyNTPanel(d, ldd, a, lda, x, ldx, rows, cols, batch, alpha, beta)
		if done == rows {
			return
		}
		// The rows after the last whole tile, as the groups take them.
		d, a, rows = d[done:], a[done*lda:], rows-done
		q = rows / skinnyNTChunks
	}
	gs, nbig := skinnyGroups(batch, group)
	pfw := 0 // an empty prefetch window: no software prefetch
	if !quads {
		pfw = skinnyWindow(cols/lanes, batch, group)
	}
	steps := skinnyNTSteps(lda, (batch+group-1)/group, rt.ntAhead)
	switch {
	case active == AVX512 && rt.pfL2:
		skinnyNTL2AVX512(d, ldd, a, lda, x, ldx, rows, q, cols, batch, steps, pfw, gs, nbig, alpha, beta)
	case active == AVX512:
		skinnyNTAVX512(d, ldd, a, lda, x, ldx, rows, q, cols, batch, steps, pfw, gs, nbig, alpha, beta)
	case rt.pfL2:
		skinnyNTL2AVX2(d, ldd, a, lda, x, ldx, rows, q, cols, batch, steps, pfw, gs, nbig, alpha, beta)
	default:
		skinnyNTAVX2(d, ldd, a, lda, x, ldx, rows, q, cols, batch, steps, pfw, gs, nbig, alpha, beta)
	}
}

// skinnyNTPanelRoute reports whether the route sends batch rows of X
// against an A of cols columns through the panel kernels: ntPanel's
// batches, and ntPanelLong's over at least ntPanelLongCols columns.
func skinnyNTPanelRoute(cols, batch int) bool {
	return rt.ntPanel.has(batch) || rt.ntPanelLong.has(batch) && cols >= rt.ntPanelLongCols
}

// skinnyNTPanel computes the rows of skinnyNT's D that whole tiles of the
// panel kernel take (skinnyNTPanelRows of A each, the first ones), X packed
// transposed into a pooled panel (packXT), and returns how many.
func skinnyNTPanel(d []float32, ldd int, a []float32, lda int, x []float32, ldx int, rows, cols, batch int, alpha, beta float32) int {
	v := skinnyNTPanelVectors(batch)
	r := skinnyNTPanelRows(v, lda)
	tiles := rows / r
	if tiles == 0 {
		return 0
	}
	buf := skinnyPanels.Get().(*[]float32)
	xt := grow(*buf, 16*v*cols)
	packXT(xt, x, ldx, batch, cols, 16*v)
	switch {
	case v == 1 && r == 16:
		skinnyNTPanel16x16AVX512(d, ldd, a, lda, xt, tiles, cols, batch, alpha, beta)
	case v == 1:
		skinnyNTPanel16x12AVX512(d, ldd, a, lda, xt, tiles, cols, batch, alpha, beta)
	default:
		skinnyNTPanel32x12AVX512(d, ldd, a, lda, xt, tiles, cols, batch, alpha, beta)
	}
	*buf = xt
	skinnyPanels.Put(buf)
	return tiles * r
}

// skinnyNNBands reports whether skinnyNN of batch rows of X over a W of span
// elements reads W in bands (route.nnBands, nnBandsBeyondL3).
func skinnyNNBands(batch, span int) bool {
	return rt.nnBands.has(batch) && (!rt.nnBandsBeyondL3 || 4*span > memBytes)
}

// skinnyNN sets D = α·X·W + β·D (β = ±0: D not read) for the batch×k X,
// k×n W and batch×n D, under the ISA skinnyNNTakes accepted.
func skinnyNN(d []float32, ldd int, x []float32, ldx int, w []float32, ldw int, batch, k, n int, alpha, beta float32) {
	group, strip := 4, 96 // rows of X in a group, bytes of a strip's row
	if active == AVX512 {
		group, strip = 8, 192
	}
	if beta == 0 && batch == 1 {
		skinnyNNRow(d[:n], x[:k], w, ldw, k, n, alpha)
		return
	}
	if skinnyNNBands(batch, (k-1)*ldw+n) {
		gs, nbig := skinnyGroups(batch, group)
		kb := skinnyNNBand(batch, group)
		for c0 := 0; c0 < n; {
			cn := skinnyNNBandCols(batch, group, c0, n, skinnyL2())
			for k0 := 0; k0 < k; k0 += kb {
				b := beta
				if k0 > 0 {
					b = 1 // the bands after the first add to D
				}
				skinnyNNKernel(d[c0:], ldd, x[k0:], ldx, w[k0*ldw+c0:], ldw, batch, min(kb, k-k0), cn, nil, 0, 64, 0, 1, gs, nbig, alpha, b)
			}
			c0 += cn
		}
		return
	}
	gs, nbig := skinnyGroups(batch, group)
	if batch <= group {
		// One group: all of W in one call, each strip prefetching the
		// next one's lines in each row.
		skinnyNNKernel(d, ldd, x, ldx, w, ldw, batch, k, n, nil, 0, 64, 0, 1, gs, nbig, alpha, beta)
		return
	}
	// The blocks of W in order, each call prefetching the next block: its
	// lines spread over this block's steps (rows of full strips, in all the
	// groups), up to skinnyNNWalkSlots a step.
	groups := (batch + group - 1) / group
	cols := strip / 4 // of a full strip
	kb := skinnyNNBlockRows(k)
	for c0 := 0; c0 < n; {
		cn := skinnyNNSpan(c0, n)
		for k0 := 0; k0 < k; k0 += kb {
			kn := min(kb, k-k0)
			nc0, nk0 := c0, k0+kb
			if nk0 >= k {
				nc0, nk0 = c0+cn, 0
			}
			pf, pfRows, pfRowBytes, l := w[:0], 0, 64, 0
			if nc0 < n {
				pf = w[nk0*ldw+nc0:]
				pfRows, pfRowBytes = min(kb, k-nk0), (4*skinnyNNSpan(nc0, n)+63)&^63
				steps := max(1, cn/cols*groups*kn)
				l = min(skinnyNNWalkSlots, (pfRows*pfRowBytes/64+steps-1)/steps)
			}
			b := beta
			if k0 > 0 {
				b = 1 // the blocks after the first add to D
			}
			skinnyNNKernel(d[c0:], ldd, x[k0:], ldx, w[k0*ldw+c0:], ldw, batch, kn, cn, pf, pfRows, pfRowBytes, l, 0, gs, nbig, alpha, b)
		}
		c0 += cn
	}
}

// skinnyNNRow is skinnyNN with β = 0 for one row of X: d cleared, then
// matTVec, which reads W's rows in address order (a strip of columns jumps a
// row of W at every step), then α.
func skinnyNNRow(d, x, w []float32, ldw, k, n int, alpha float32) {
	clear(d)
	matTVec(d, w, ldw, x)
	if alpha != 1 {
		scale(alpha, d)
	}
}

// skinnyNNKernel calls the skinnyNN kernel of the active ISA (AVX-512 or
// AVX2).
func skinnyNNKernel(d []float32, ldd int, x []float32, ldx int, w []float32, ldw int, batch, k, n int, pf []float32, pfRows, pfRowBytes, lps, next, gs, nbig int, alpha, beta float32) {
	if active == AVX512 {
		skinnyNNAVX512(d, ldd, x, ldx, w, ldw, batch, k, n, pf, pfRows, pfRowBytes, lps, next, gs, nbig, alpha, beta)
		return
	}
	skinnyNNAVX2(d, ldd, x, ldx, w, ldw, batch, k, n, pf, pfRows, pfRowBytes, lps, next, gs, nbig, alpha, beta)
}

// skinny computes g as a skinny product where one is taken (few rows of C
// against a large op(B) as is or transposed, A as is), with split over
// goroutines as Gemm splits, and reports whether it did.
func (g *gemmOp) skinny(split bool) bool {
	switch {
	case g.transA:
		return false
	case g.transB && g.m == 1 && g.beta == 0 && skinnyNTTakes(g.n, g.k, g.ldb, 1):
		// One row, C not read: MatVec, then α.
		c := g.c[:g.n]
		matVec(c, g.b, g.ldb, g.a[:g.k])
		if g.alpha != 1 {
			scale(g.alpha, c)
		}
		return true
	case g.transB && skinnyNTTakes(g.n, g.k, g.ldb, g.m):
		g.runSkinny(true, split)
		return true
	case g.transB && g.beta == 0 && g.m <= skinnyMaxRows && g.micro != nil && (!split || gemmParts(g.m, g.n, g.k) <= 1):
		// Few rows, C not read, A within skinnyBytes (the case above takes
		// it beyond), not split: MatVecBatch's kernel reads A's rows in
		// place where the blocked route would pack op(B) = Aᵀ; then α.
		if g.m == 1 {
			matVec(g.c[:g.n], g.b, g.ldb, g.a[:g.k])
		} else {
			matVecBatch(g.c, g.ldc, g.b, g.ldb, g.a, g.lda, g.n, g.k, g.m)
		}
		if g.alpha != 1 {
			for i := 0; i < g.m; i++ {
				scale(g.alpha, g.c[i*g.ldc:i*g.ldc+g.n])
			}
		}
		return true
	case !g.transB && skinnyNNTakes(g.k, g.n, g.ldb, g.m):
		g.runSkinny(false, split)
		return true
	}
	return false
}
