// Package rnn holds fused recurrent cells on heed's kernels: one step of an
// LSTM or a GRU, the recurrence of an RNN encoder–decoder.
//
// A cell holds its weights as one row-major matrix over the concatenation
// [x; h] of the input and the previous hidden state (the gate rows stacked in
// PyTorch's order), so the gates come from one matrix-vector product, and a
// workspace, so that a step allocates nothing. The nonlinearities run over
// whole gate blocks (kernels.Sigmoid, kernels.Tanh) and the state update over
// whole H-vectors (kernels.Mul, Add, Tanh), each a pass over data already in
// L1 beside the gate product's pass over the weights. A cell is not safe for concurrent use (the workspace); use one
// cell per goroutine (they may share the weights).
package rnn
