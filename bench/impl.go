package bench

import (
	"runtime"
	"sort"

	"github.com/heedml/heed/kernels"
)

// Kernel names one operation that every implementation is measured on.
type Kernel int

const (
	Dot         Kernel = iota // x·y
	MatVec                    // dst = A·x
	MatTVec                   // dst += Aᵀ·x
	MatVecBatch               // dst = X·Aᵀ (batch vectors against one matrix)
	Exp                       // dst = eˣ
	Tanh                      // dst = tanh x
	Softmax                   // dst = softmax x
	Additive                  // dst[s] = Σ v·tanh(q + K[s])
	// Attention steps (package attention), see attention.go.
	StepDot      // Luong dot step: scores, softmax, context
	StepScaled   // scaled dot-product step
	StepGeneral  // Luong general step (u = Wᵀh, then as dot)
	StepAdditive // Bahdanau step (q = W₁h, fused scores, softmax, context)
	StepBatch    // a batch of Luong dot steps over independent sequences
	MultiHead    // causal multi-head scaled dot-product self-attention
	StepMemory   // Luong dot steps over Memories in turn, each from DRAM (decode.go)
	DecodeF32    // Luong dot step on a float32 cache (decode_format.go)
	DecodeBF16   // … on a bfloat16 cache
	DecodeF16    // … on a float16 cache
	DecodeQ8     // … on a q8 cache
	DecodeQ8Q8   // … on a q8 cache whose steps quantise the query too
	numKernels
)

// Kernels lists every kernel in report order.
var Kernels = []Kernel{Dot, MatVec, MatTVec, MatVecBatch, Exp, Tanh, Softmax, Additive,
	StepDot, StepScaled, StepGeneral, StepAdditive, StepBatch, StepMemory, DecodeF32, DecodeBF16, DecodeF16, DecodeQ8, DecodeQ8Q8, MultiHead}

var kernelNames = [...]string{"Dot", "MatVec", "MatTVec", "MatVecBatch", "Exp", "Tanh", "Softmax", "AdditiveScore",
	"Step Luong dot", "Step scaled dot", "Step Luong general", "Step Bahdanau", "Batch of dot steps", "MultiHead causal",
	"Decode step from memory", "Decode float32 cache", "Decode bfloat16 cache", "Decode float16 cache", "Decode q8 cache",
	"Decode q8q8 cache"}

func (k Kernel) String() string { return kernelNames[k] }

// Impl is one implementation of some of the kernels: heed under one ISA, or a
// peer. A nil field means the implementation cannot do that work.
type Impl struct {
	Name string
	// Heed marks heed's own implementations; ISA is the one they run under.
	Heed bool
	ISA  kernels.ISA
	// Width, for heed under AVX512, is the vector width in bits (256 or 512)
	// of the kernels that come in both widths; 0 means the package's choice
	// for this CPU (kernels.AVX512Width).
	Width int
	// Parallel marks implementations that use more than one goroutine; they
	// are reported beside, not ranked against, the single-threaded ones.
	Parallel bool
	// Threads is how many threads a call may keep busy (0 means 1). Calls
	// on one thread are timed by the process's CPU time, others by the wall
	// clock (see MeasureAll).
	Threads int
	// CGo marks peers reached through cgo (OpenBLAS, SLEEF): C libraries,
	// not Go peers, in the targets.
	CGo bool
	// Note says how the implementation does each kernel when it is a
	// composition of the peer's primitives rather than one call.
	Note map[Kernel]string
	// Tol widens the comparison test's tolerance for a kernel whose accuracy
	// the peer does not promise to match heed's (documented per use).
	Tol map[Kernel]float64
	// Enter, if not nil, prepares the process before im is measured (for
	// example the thread count of a C library).
	Enter func()
	// Decode, if not decodeAttend, makes im one of heed's kernel-level
	// variants of the decode step from memory, which does that step only.
	Decode decodeVariant

	// Format holds the peer's decode steps on stored caches (DecodeBF16,
	// DecodeF16, DecodeQ8, DecodeQ8Q8) in its own library's 16- or 8-bit types.
	Format map[Kernel]*FormatStep

	Dot         func(x, y []float32) float32
	MatVec      func(dst []float32, a kernels.Matrix, x []float32)
	MatTVec     func(dst []float32, a kernels.Matrix, x []float32)
	MatVecBatch func(dst, a, x kernels.Matrix)
	Exp         func(dst, x []float32)
	Tanh        func(dst, x []float32)
	Softmax     func(dst, x []float32)
	Additive    func(dst []float32, k kernels.Matrix, q, v []float32)

	order int
}

// Has reports whether im implements k.
func (im *Impl) Has(k Kernel) bool {
	switch k {
	case Dot:
		return im.Dot != nil
	case MatVec:
		return im.MatVec != nil
	case MatTVec:
		return im.MatTVec != nil
	case MatVecBatch:
		return im.MatVecBatch != nil
	case Exp:
		return im.Exp != nil
	case Tanh:
		return im.Tanh != nil
	case Softmax:
		return im.Softmax != nil
	case Additive:
		return im.Additive != nil
	}
	return im.hasStep(k)
}

// enter prepares the process for running im: GOMAXPROCS is set to the
// threads it may use (1 for single-threaded implementations, so that nothing
// — heed's attention package included — spreads work over goroutines), heed's
// implementations select their ISA, every other restores heed's default.
func (im *Impl) enter() {
	if want := max(1, im.Threads); runtime.GOMAXPROCS(0) != want {
		runtime.GOMAXPROCS(want)
	}
	if im.Heed {
		if err := kernels.Use(im.ISA); err != nil {
			panic(err)
		}
		if defaultWidth != 0 {
			kernels.UseAVX512Width(im.Width)
		}
		return
	}
	kernels.Use(defaultISA)
	if defaultWidth != 0 {
		kernels.UseAVX512Width(0)
	}
	if im.Enter != nil {
		im.Enter()
	}
}

var defaultISA = kernels.Active()

// defaultWidth is the AVX-512 width heed chose for this CPU (0 without
// AVX-512).
var defaultWidth = kernels.AVX512Width()

var registry []*Impl

// register adds im; files that build a peer (some behind build tags) call it
// from init. order sorts the report's columns.
func register(order int, im *Impl) {
	im.order = order
	registry = append(registry, im)
	sort.SliceStable(registry, func(i, j int) bool { return registry[i].order < registry[j].order })
}

// Impls returns every implementation built into this binary, heed's first.
func Impls() []*Impl { return append([]*Impl(nil), registry...) }
