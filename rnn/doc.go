// Package rnn holds fused recurrent cells on heed's kernels: one step of an
// LSTM or a GRU, the recurrence of an RNN encoder–decoder.
//
// A cell holds its weights as one row-major matrix over the concatenation
// [x; h] of the input and the previous hidden state (the gate rows stacked in
// PyTorch's order), so the gates come from one matrix-vector product
// (kernels.MatVec), and a workspace, so that a step allocates nothing. The
// bias, the nonlinearities and the state update then take one pass over the
// hidden size (kernels.LSTMCell, kernels.GRUCell), with the bits of the
// whole-vector composition (Add, Sigmoid, Tanh, Mul) they replace.
// StepBatch advances B sequences at once: the gates of all of them from one
// matrix product (kernels.GemmScratch.GemmPacked against the weights packed
// once), then the same pass per sequence. A cell is not safe for concurrent
// use (the workspaces); use one cell per goroutine (they may share the
// weights).
package rnn
