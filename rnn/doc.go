// Package rnn holds fused recurrent cells on heed's kernels: one step of an
// LSTM or a GRU, the recurrence of an RNN encoder–decoder, and their
// training over a sequence (the forward that keeps what the backward needs,
// and backpropagation through time).
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
//
// For training, LSTM.Forward and GRU.Forward run a cell over T steps of B
// sequences (step-major matrices, PyTorch's (T, B, ·) layout) and keep in a
// caller-owned tape (LSTMTape, GRUTape) what the backward needs: the
// activated gates and the states of every step. LSTM.Backward and
// GRU.Backward then run backpropagation through time from the gradients of
// the outputs and of the final states, and add the gradients of the inputs,
// the initial states, the weights and the biases to caller-owned buffers
// (LSTMGrads, GRUGrads), as a framework's autograd does. Per step, one pass
// of kernels.LSTMCellBackward or GRUCellBackward and one matrix product for
// the recurrence; then, as oneDNN does, the weights', biases' and inputs'
// gradients of all steps as single products over the T·B rows. Forward and
// Backward use only the tape's scratch, so goroutines may share a cell, each
// with its own tape.
package rnn
