package bench

import (
	"fmt"
	"html"
	"io"
	"math"
)

// palette: heed's ISAs first (warm), then peers; 20 distinct colours.
var palette = []string{"#d62728", "#ff7f0e", "#8c1a1a", "#7f7f7f", "#1f77b4", "#2ca02c", "#9467bd", "#17becf",
	"#bcbd22", "#e377c2", "#393b79", "#637939", "#8c6d31", "#7b4173", "#3182bd", "#31a354", "#756bb1", "#636363",
	"#e6550d", "#843c39"}

// WriteSVG draws one panel per kernel: throughput against size (both axes
// logarithmic), one line per implementation, heed's lines solid and thick,
// peers' dashed, and the ceilings as thin grey lines (streaming bandwidth
// per level for GB/s, FMA peak for GFLOP/s, one element per FMA slot for
// Gelem/s). It is plain SVG with no dependencies.
func WriteSVG(w io.Writer, title string, ceil Ceilings, rs []Result) {
	const pw, ph, cols = 480, 300, 2
	const ml, mr, mt, mb = 60, 10, 28, 40
	var ks []Kernel
	for _, k := range Kernels {
		for _, r := range rs {
			if r.Case.Kernel == k {
				ks = append(ks, k)
				break
			}
		}
	}
	ims := columns(rs)
	color := map[*Impl]string{}
	for i, im := range ims {
		color[im] = palette[i%len(palette)]
	}
	legendH := 20 * ((len(ims) + 3) / 4)
	rows := (len(ks) + cols - 1) / cols
	W, H := cols*pw, 40+legendH+rows*ph
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", W, H, W, H)
	fmt.Fprintf(w, `<rect width="100%%" height="100%%" fill="white"/><text x="%d" y="22" font-size="15" text-anchor="middle">%s</text>`+"\n", W/2, html.EscapeString(title))
	for i, im := range ims {
		x, y := 20+(i%4)*(W/4), 40+20*(i/4)
		fmt.Fprintf(w, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="%s" %s/><text x="%d" y="%d">%s</text>`+"\n",
			x, y, x+24, y, color[im], width(im), dash(im), x+30, y+4, html.EscapeString(im.Name))
	}
	for pi, k := range ks {
		ox, oy := (pi%cols)*pw, 40+legendH+(pi/cols)*ph
		var kr []Result
		xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
		for _, r := range rs {
			if r.Case.Kernel == k && r.Rate > 0 {
				kr = append(kr, r)
				xmin, xmax = math.Min(xmin, float64(r.Case.N)), math.Max(xmax, float64(r.Case.N))
				ymin, ymax = math.Min(ymin, r.Rate), math.Max(ymax, r.Rate)
			}
		}
		type hline struct {
			v     float64
			label string
		}
		var ceils []hline
		switch Unit(k) {
		case "GB/s":
			for _, l := range ceil.Levels {
				ceils = append(ceils, hline{l.GBs, l.Name})
			}
		case "GFLOP/s":
			ceils = append(ceils, hline{ceil.GFlops, "FMA peak"})
		default:
			ceils = append(ceils, hline{ceil.GFlops / 2, "1 elem/FMA slot"})
		}
		for _, h := range ceils {
			ymin, ymax = math.Min(ymin, h.v), math.Max(ymax, h.v)
		}
		lx0, lx1 := math.Log2(xmin), math.Log2(xmax)
		if lx1 == lx0 { // one size: in the middle
			lx0, lx1 = lx0-1, lx1+1
		}
		ly0, ly1 := math.Floor(math.Log10(ymin)), math.Ceil(math.Log10(ymax))
		if ly1 == ly0 {
			ly1++
		}
		px := func(n float64) float64 { return float64(ox+ml) + (math.Log2(n)-lx0)/(lx1-lx0)*float64(pw-ml-mr) }
		py := func(v float64) float64 {
			return float64(oy+ph-mb) - (math.Log10(v)-ly0)/(ly1-ly0)*float64(ph-mt-mb)
		}
		fmt.Fprintf(w, `<text x="%d" y="%d" font-size="13" text-anchor="middle">%v (%s)</text>`+"\n", ox+ml+(pw-ml-mr)/2, oy+18, k, Unit(k))
		fmt.Fprintf(w, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#444"/>`+"\n", ox+ml, oy+mt, pw-ml-mr, ph-mt-mb)
		for e := ly0; e <= ly1; e++ {
			y := py(math.Pow(10, e))
			fmt.Fprintf(w, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%g</text>`+"\n",
				ox+ml, y, ox+pw-mr, y, ox+ml-4, y+4, math.Pow(10, e))
		}
		for _, h := range ceils {
			y := py(h.v)
			fmt.Fprintf(w, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#999" stroke-width="0.8"/><text x="%d" y="%.1f" text-anchor="end" fill="#777" font-size="9">%s</text>`+"\n",
				ox+ml, y, ox+pw-mr, y, ox+pw-mr-2, y-2, html.EscapeString(h.label))
		}
		seen := map[int]bool{}
		for _, r := range kr {
			if n := r.Case.N; !seen[n] {
				seen[n] = true
				x := px(float64(n))
				fmt.Fprintf(w, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#eee"/><text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n",
					x, oy+mt, x, oy+ph-mb, x, oy+ph-mb+14, sizeLabel(n))
			}
		}
		fmt.Fprintf(w, `<text x="%d" y="%d" text-anchor="middle" fill="#444">%s</text>`+"\n", ox+ml+(pw-ml-mr)/2, oy+ph-8, axisLabel(k))
		for _, im := range ims {
			pts, n := "", 0
			var x, y float64
			for _, r := range kr {
				if r.Impl == im {
					x, y = px(float64(r.Case.N)), py(r.Rate)
					pts += fmt.Sprintf("%.1f,%.1f ", x, y)
					n++
				}
			}
			switch {
			case n == 1: // one size: a point
				fmt.Fprintf(w, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"/>`+"\n", x, y, color[im])
			case n > 1:
				fmt.Fprintf(w, `<polyline points="%s" fill="none" stroke="%s" stroke-width="%s" %s/>`+"\n", pts, color[im], width(im), dash(im))
			}
		}
	}
	fmt.Fprintln(w, "</svg>")
}

func width(im *Impl) string {
	if im.Heed {
		return "2.5"
	}
	return "1.5"
}

func dash(im *Impl) string {
	switch {
	case im.Heed && im.Parallel:
		return `stroke-dasharray="2,2"`
	case im.Heed:
		return ""
	}
	return `stroke-dasharray="6,3"`
}

func sizeLabel(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dM", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dK", n>>10)
	}
	return fmt.Sprint(n)
}

func axisLabel(k Kernel) string {
	switch k {
	case MatVec, MatTVec, Additive:
		return "n (n×n matrix)"
	case MatVecBatch:
		return fmt.Sprintf("n (%d vectors, n×n matrix)", BatchSize)
	case StepDot, StepScaled, StepGeneral, StepAdditive, StepBatch:
		return "S keys (d grows with S: see the tables)"
	case MultiHead:
		return "T = S (d grows with S: see the tables)"
	case StepMemory:
		return fmt.Sprintf("S keys (d=%d, %d Memories in turn)", decodeShapes[32768], DecodeMemories)
	case DecodeF32, DecodeBF16, DecodeF16, DecodeQ8, DecodeQ8Q8:
		return fmt.Sprintf("S keys (d=%d; the largest from memory, Memories in turn)", formatD)
	}
	return "n (vector length)"
}
