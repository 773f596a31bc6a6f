//go:build purego || !amd64

package kernels

import "github.com/heedml/heed/fallback"

// Dispatch of the decoder-step families (Sigmoid, Log, LogSoftmax): pure Go.

func sigmoid(dst, x []float32)    { fallback.Sigmoid(dst, x) }
func log(dst, x []float32)        { fallback.Log(dst, x) }
func logSoftmax(dst, x []float32) { fallback.LogSoftmax(dst, x) }

func addConstTo(dst []float32, c float32, x []float32) { fallback.AddConstTo(dst, c, x) }

func firstAbove(x []float32, t float32) int { return firstAboveBlocks(x, t) }
