//go:build !purego

package kernels

import "github.com/heedml/heed/fallback"

func dot(x, y []float32) float32 {
	switch active {
	case AVX512:
		return dotAVX512(x, y)
	case AVX2:
		return dotAVX2(x, y)
	}
	return fallback.Dot(x, y)
}
