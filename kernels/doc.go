// Package kernels holds heed's float32 SIMD kernels for attention: dot
// products, matrix-vector products (plain, transposed, batched), vector exp and
// tanh, a numerically stable softmax, the softmax and context of an attention
// step in one call (SoftmaxMatTVecAdd), a whole dot-product step in one
// streaming pass over keys that are also the values (DotSoftmaxMatTVec) and the
// fused additive (Bahdanau) score. For many queries, a packed general matrix
// product (Gemm). For reduced-precision keys and values, bfloat16, binary16 and
// 8-bit block storage ([BF16], [F16], [Q8Block]) in [Stored] matrices with the
// decode kernels over them (MatVecStored, DotSoftmaxMatTVecStored, …). For the
// rest of a decoder step, Sigmoid, Log, LogSoftmax, TopK, the element-wise
// kernels (Scale, AddScaled, AddConst, Add, Sub, Mul, Div) with BLAS-strided
// DotInc and AxpyInc; and the element-wise pass of a recurrent cell after its
// gate product, nonlinearities and state update in one pass (LSTMCell,
// GRUCell), with their training passes (LSTMCellTrain and GRUCellTrain,
// which also keep the activated gates, and LSTMCellBackward and
// GRUCellBackward, the element-wise backward of a step). For training too,
// the loss over a vocabulary with its gradient in one call
// (SoftmaxCrossEntropy, SoftmaxCrossEntropyRows) and the optimizer steps over
// a flat parameter vector (AdamStep, SGDStep).
//
// Every kernel writes its result into its first argument, the destination,
// and overwrites it: Exp(dst, x) sets dst = eˣ, MatVec(dst, a, x) sets dst =
// A·x, MatTVec(dst, a, x) sets dst = Aᵀ·x. A kernel that adds to what its
// destination holds says so in its name, which ends in Add (MatTVecAdd: dst +=
// Aᵀ·x), or takes BLAS's β (Gemm: C = α·op(A)·op(B) + β·C). Axpy and AxpyInc
// keep BLAS's name and meaning (y += α·x); a streaming kernel that continues a
// running state (DotSoftmaxMatTVec) takes the state as a parameter. The
// element-wise kernels allow the destination to be exactly an input (the same
// first element and length), for an in-place update; every kernel panics,
// naming the arguments, when an output overlaps an input in any other way.
//
// For training, the backward of what the forward has: SoftmaxBackward and
// LogSoftmaxBackward (for a vector and for the rows of a matrix),
// TanhBackward and SigmoidBackward from the outputs, AdditiveScoreBackwardAdd
// (the additive score's gradients in one pass over the keys, tanh recomputed)
// and the element-wise work of a flash-attention backward tile
// (SoftmaxRecompute, SoftmaxBackwardBlock). Each states its bound.
//
// Every kernel validates its shapes in Go and panics, before touching memory,
// with a message that names the kernel and the sizes. It then calls the best
// implementation for the CPU, chosen once at start-up (see [ISA]). Kernels never
// allocate, never read or write outside the slices they are given, and are safe
// for concurrent use.
//
// Matrices are row-major views with a stride, laid out like gonum's
// blas32.General, which converts to [Matrix] directly.
//
// Accuracy contracts, checked against a float64 oracle in the tests (u = 2⁻²⁴):
//   - Dot, Sum and the matrix-vector products: |error| ≤ γₙ·Σ|xᵢ·yᵢ|, γₙ = n·u/(1−n·u).
//   - Exp and Tanh: ≤ 2 ULP.
//   - Softmax: each output within (|xᵢ − max| + n + 4)·u relative, and Σ = 1 within (n+2)·u.
//   - SoftmaxMatTVecAdd: Softmax's bounds for the weights, γₙ₊₂ for the context they give.
//   - DotSoftmaxMatTVec: Dot's bound for the scores; each term of the sum and context within
//     γₖ + (|scoreᵣ − max| + D)·u, k counting the rows, two roundings per exponential and
//     three per rescaling, D the largest |scoreᵣ − max|.
//
// Results may differ in the last bits between ISAs (summation order, FMA),
// except AdamStep's and SGDStep's, whose stated operations give the same bits
// on every ISA.
// Special values (NaN, ±Inf, ±0) give the same results on every ISA, with two
// exceptions that Dot and Axpy state precisely and the other kernels' sums
// follow: where a product of finite factors or a partial sum overflows, the
// result may be NaN on one ISA and ±Inf (or finite) on another; and a zero
// result from products that underflow may have either sign.
//
// A NaN input gives a NaN result. Max and Softmax return the default quiet
// NaN (bits 0x7FC00000) and Exp and Tanh state what they keep of the input
// NaN; elsewhere the sign and payload of a NaN result, and whether it is
// quiet, are not specified and may differ between ISAs.
package kernels
