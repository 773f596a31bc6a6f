// Package attention implements the attention mechanisms of sequence-to-sequence
// decoders and of query/key/value attention on heed's float32 kernels.
//
// For a query (decoder state) h and keys (encoder states) h̄₁..h̄_S, the rows of
// a matrix H̄, a [Scorer] gives one score per key:
//
//	Luong dot       score_s = hᵀh̄_s                     (one MatVec H̄·h)
//	scaled dot      score_s = hᵀh̄_s / √d                 (H̄·(h/√d))
//	cosine          score_s = hᵀh̄_s / (‖h‖·‖h̄_s‖)       (key norms cached)
//	Luong general   score_s = hᵀW h̄_s                    (u = Wᵀh once, then H̄·u)
//	Bahdanau        score_s = vᵀtanh(W₁h + W₂h̄_s)        (K = H̄W₂ᵀ cached; q = W₁h; one fused pass)
//
// A step turns the scores into weights α = softmax(score) (the stable softmax,
// max subtracted) and a context c = Σ_s α_s·value_s = Vᵀα, where the values V
// are the keys unless separate values are given. Luong's attentional state is
// h̃ = tanh(W_c[c; h]) ([Attentional]). Multi-head scaled dot-product attention
// ([MultiHead]) computes, for each head i with column blocks Q_i, K_i, V_i,
// O_i = softmax(Q_iK_iᵀ/√d_k)·V_i, optionally with a causal mask.
//
// A [Memory] holds one sequence: its keys, values, mask and whatever the scorer
// caches, plus the scratch space of a step, so that a step, a call with many
// queries, or a [Batch] of sequences allocates nothing. Masked keys get weight 0;
// a fully masked query gets all-zero weights and an all-zero context, never NaN.
//
// Shapes are validated once per call (or at construction) and a wrong one panics
// before any work, with a message naming the mechanism and the sizes, such as
// "heed/attention: Bahdanau: len(query)=3, want 4". Matrices are
// row-major views with a stride ([kernels.Matrix], gonum's blas32.General
// layout), so column blocks and row ranges are used in place, without copies.
//
// Parallel calls (a long step split across keys, a large Batch or MultiHead)
// run on a pool of long-lived worker goroutines started on first use, so that
// they too allocate nothing per call. The pool grows to a call's need, at most
// the GOMAXPROCS−1 in effect during that call; once a second, a worker between
// jobs exits if the pool holds more than the current GOMAXPROCS−1, so after
// GOMAXPROCS is lowered the pool shrinks to it within about a second.
//
// Training: every forward has a backward that adds the gradients of a loss
// to caller-owned buffers (frameworks zero them once per step).
// [Memory.AttendBackward] and [Memory.AttendManyBackward] take the weights
// the forward returned and the gradients of the context (and weights), and
// give the gradients of the queries, the keys, the values and the scorer's
// parameters ([Grads]); [Attentional.ApplyBackward] and ApplyManyBackward
// those of h̃ = tanh(W_c[c; h]); [MultiHeadTrain] keeps one logsumexp per
// query row and head, from which [MultiHeadBackward] and
// [GroupedQueryBackward] recompute the weights tile by tile (the flash
// backward: no T×S matrix). Nothing else is kept between forward and
// backward. Each backward's doc states its error bound, and the tests check
// it against a float64 evaluation of the gradient that finite differences
// check in turn.
//
// Accuracy: scores carry the error bounds of the kernels that compute them
// (γₙ·Σ|terms| for the products); [Memory.Attend] states the bound this gives
// the weights and the context, and the tests check every mechanism against a
// float64 evaluation of its formula within it (see oracle_test.go). How the
// calls run, and why, is in DESIGN.md (and, for the backward, BACKWARD.md).
package attention
