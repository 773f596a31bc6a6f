//go:build !purego

package kernels

import "github.com/heedml/heed/internal/fallback"

// softmaxFinish completes an assembly softmax that returned status st.
func softmaxFinish(st int, dst, x []float32) {
	switch st {
	case softmaxSpecial:
		fallback.Softmax(dst, x)
	case softmaxNaN:
		fallback.FillNaN(dst)
	}
}
