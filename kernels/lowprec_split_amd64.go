//go:build !purego

package kernels

import (
	"fmt"
	"os"
	"strings"
)

// decodeStepSplit, when 2 or 4, makes the reduced-precision step on AVX-512,
// where it takes its prefetching (far) kernel, take the multi-stream variant
// (decodeStep<F>Split<k>PF<ISA>) for the leading multiple of 8·k rows: the
// rows in k equal parts, a block of eight rows of each part in turn, each
// part read in address order, keys and values, with the one running state.
// It is 0 (one stream) on every CPU: unlike the float32 far kernel, whose
// keys the hardware prefetcher follows, the fused step's rows are prefetched
// by software two blocks ahead, and on the Intel core measured two or four
// parts read no faster than one (kernels/LOWPREC.md). HEED_DECODESTEP_SPLIT=0|2|4
// sets it, for benchmarking on other cores.
var decodeStepSplit = 0

// haveDecodeStepSplit tells whether the multi-stream step kernels exist.
const haveDecodeStepSplit = true

func init() {
	switch v := strings.TrimSpace(os.Getenv("HEED_DECODESTEP_SPLIT")); v {
	case "":
	case "0", "2", "4":
		decodeStepSplit = int(v[0] - '0')
	default:
		envErrs = append(envErrs, fmt.Errorf("heed/kernels: HEED_DECODESTEP_SPLIT=%q: want 0, 2 or 4; ignored, using %d", v, decodeStepSplit))
	}
}

// decodeStepSplitRows is how many of the n rows (a multiple of 8) the
// multi-stream step takes: the leading multiple of 8·decodeStepSplit when the
// step is far (pf) and the ISA AVX-512, else 0.
func decodeStepSplitRows(n int, pf bool) int {
	k := decodeStepSplit
	if k < 2 || !pf || active != AVX512 || n < 8*k {
		return 0
	}
	return n &^ (8*k - 1)
}

// decodeStepSplitAsm runs the multi-stream step kernel of the format, width
// and decodeStepSplit over all of scores (a multiple of 8·decodeStepSplit
// rows; h of the fused step's shapes) and returns false on a score that is
// not finite. hb is the quantised query for Q8Q8 keys, else nil.
func decodeStepSplitAsm(ctx, scores []float32, kb []byte, kl int, vb []byte, vl int, h []float32, hb []byte, format uint8, st *SoftmaxState) bool {
	var r int
	z, four := zmm(), decodeStepSplit == 4
	switch {
	case hb != nil && z && four:
		st.Max, st.Sum, r = decodeStepQ8Q8Split4PFAVX512Z(ctx, scores, kb, kl, vb, vl, hb, st.Max, st.Sum)
	case hb != nil && z:
		st.Max, st.Sum, r = decodeStepQ8Q8Split2PFAVX512Z(ctx, scores, kb, kl, vb, vl, hb, st.Max, st.Sum)
	case hb != nil && four:
		st.Max, st.Sum, r = decodeStepQ8Q8Split4PFAVX512(ctx, scores, kb, kl, vb, vl, hb, st.Max, st.Sum)
	case hb != nil:
		st.Max, st.Sum, r = decodeStepQ8Q8Split2PFAVX512(ctx, scores, kb, kl, vb, vl, hb, st.Max, st.Sum)
	case format == fmtBF16 && z && four:
		st.Max, st.Sum, r = decodeStepBF16Split4PFAVX512Z(ctx, scores, kb, kl, vb, vl, h, st.Max, st.Sum)
	case format == fmtBF16 && z:
		st.Max, st.Sum, r = decodeStepBF16Split2PFAVX512Z(ctx, scores, kb, kl, vb, vl, h, st.Max, st.Sum)
	case format == fmtBF16 && four:
		st.Max, st.Sum, r = decodeStepBF16Split4PFAVX512(ctx, scores, kb, kl, vb, vl, h, st.Max, st.Sum)
	case format == fmtBF16:
		st.Max, st.Sum, r = decodeStepBF16Split2PFAVX512(ctx, scores, kb, kl, vb, vl, h, st.Max, st.Sum)
	case format == fmtF16 && z && four:
		st.Max, st.Sum, r = decodeStepF16Split4PFAVX512Z(ctx, scores, kb, kl, vb, vl, h, st.Max, st.Sum)
	case format == fmtF16 && z:
		st.Max, st.Sum, r = decodeStepF16Split2PFAVX512Z(ctx, scores, kb, kl, vb, vl, h, st.Max, st.Sum)
	case format == fmtF16 && four:
		st.Max, st.Sum, r = decodeStepF16Split4PFAVX512(ctx, scores, kb, kl, vb, vl, h, st.Max, st.Sum)
	case format == fmtF16:
		st.Max, st.Sum, r = decodeStepF16Split2PFAVX512(ctx, scores, kb, kl, vb, vl, h, st.Max, st.Sum)
	case z && four:
		st.Max, st.Sum, r = decodeStepQ8Split4PFAVX512Z(ctx, scores, kb, kl, vb, vl, h, st.Max, st.Sum)
	case z:
		st.Max, st.Sum, r = decodeStepQ8Split2PFAVX512Z(ctx, scores, kb, kl, vb, vl, h, st.Max, st.Sum)
	case four:
		st.Max, st.Sum, r = decodeStepQ8Split4PFAVX512(ctx, scores, kb, kl, vb, vl, h, st.Max, st.Sum)
	default:
		st.Max, st.Sum, r = decodeStepQ8Split2PFAVX512(ctx, scores, kb, kl, vb, vl, h, st.Max, st.Sum)
	}
	return r == 0
}
