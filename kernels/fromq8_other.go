//go:build purego || !(amd64 || arm64)

package kernels

import "github.com/heedml/heed/fallback"

// fromQ8 is FromQ8 in Go (fallback) where no assembly kernel exists.
func fromQ8(dst []float32, src []Q8Block) { fallback.DequantizeQ8(dst, src) }
