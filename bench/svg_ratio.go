package bench

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// ratioRange is the span of the ratio plot's logarithmic axis; bars beyond it
// are cut at the edge and marked with an arrow, their value still written.
const ratioLo, ratioHi = 0.25, 8.0

// WriteRatioSVG draws heed's speed over the best single-threaded peer's (the
// peer's time ÷ heed's time: the tables' "÷ best peer") for every kernel and
// size: one panel per kernel, one bar per size rising from the 1.0 line,
// green where heed leads and red where it does not, labelled with the ratio
// and the peer. Every panel shares one logarithmic axis, so bars compare
// across panels. It is plain SVG with no dependencies.
func WriteRatioSVG(w io.Writer, title string, rs []Result) {
	type bar struct {
		label, peer string
		ratio       float64
	}
	type panel struct {
		k    Kernel
		bars []bar
	}
	var ps []panel
	maxBars := 1
	for _, k := range Kernels {
		p := panel{k: k}
		for _, g := range byCase(rs) {
			if g[0].Case.Kernel != k {
				continue
			}
			h, pr := Best(g)
			if h == nil || pr == nil {
				continue
			}
			p.bars = append(p.bars, bar{sizeLabel(g[0].Case.N), pr.Impl.Name, pr.Ns / h.Ns})
		}
		if len(p.bars) > 0 {
			ps = append(ps, p)
			maxBars = max(maxBars, len(p.bars))
		}
	}
	const cols, ph, ml, mr, mt, mb = 3, 240, 44, 8, 30, 52
	pw := max(330, ml+mr+maxBars*44)
	rows := (len(ps) + cols - 1) / cols
	W, H := cols*pw, 70+rows*ph
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", W, H, W, H)
	fmt.Fprintf(w, `<rect width="100%%" height="100%%" fill="white"/><text x="%d" y="22" font-size="15" text-anchor="middle">%s</text>`+"\n", W/2, html.EscapeString(title))
	fmt.Fprintf(w, `<text x="%d" y="42" text-anchor="middle" fill="#444">heed's best ISA, one goroutine, ÷ the fastest single-threaded peer at each size (peer time ÷ heed time). `+
		`<tspan fill="#2a9d3a" font-weight="bold">green: heed leads</tspan>, <tspan fill="#d62728" font-weight="bold">red: heed behind</tspan>; the black line is 1.0; under each bar, the peer.</text>`+"\n", W/2)
	ly0, ly1 := math.Log2(ratioLo), math.Log2(ratioHi)
	for pi, p := range ps {
		ox, oy := (pi%cols)*pw, 60+(pi/cols)*ph
		x0, x1 := float64(ox+ml), float64(ox+pw-mr)
		py := func(v float64) float64 {
			l := math.Min(math.Max(math.Log2(v), ly0), ly1)
			return float64(oy+ph-mb) - (l-ly0)/(ly1-ly0)*float64(ph-mt-mb)
		}
		fmt.Fprintf(w, `<text x="%.1f" y="%d" font-size="13" text-anchor="middle">%v</text>`+"\n", (x0+x1)/2, oy+18, p.k)
		fmt.Fprintf(w, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="none" stroke="#bbb"/>`+"\n", x0, oy+mt, x1-x0, ph-mt-mb)
		for _, v := range []float64{0.25, 0.5, 2, 4, 8} {
			y := py(v)
			fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e4e4e4"/><text x="%.1f" y="%.1f" text-anchor="end" fill="#666">%g×</text>`+"\n",
				x0, y, x1, y, x0-4, y+4, v)
		}
		one := py(1)
		slot := (x1 - x0) / float64(len(p.bars))
		bw := math.Min(28, 0.6*slot)
		for i, b := range p.bars {
			cx := x0 + slot*(float64(i)+0.5)
			y := py(b.ratio)
			fill := "#2a9d3a"
			if b.ratio < 1 {
				fill = "#d62728"
			}
			top, hgt := math.Min(y, one), math.Abs(one-y)
			if hgt < 3 { // a ratio near 1 still shows its side of the line
				hgt = 3
				if b.ratio < 1 {
					top = one
				} else {
					top = one - 3
				}
			}
			fmt.Fprintf(w, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%v %s: %.2f× %s</title></rect>`+"\n",
				cx-bw/2, top, bw, hgt, fill, p.k, b.label, b.ratio, html.EscapeString(b.peer))
			if b.ratio > ratioHi || b.ratio < ratioLo { // cut at the edge: an arrow
				dir := -1.0
				if b.ratio < ratioLo {
					dir = 1
				}
				fmt.Fprintf(w, `<path d="M%.1f %.1f l%.1f %.1f l%.1f 0 z" fill="%s"/>`+"\n", cx-bw/2, y, bw/2, 7*dir, bw/2, fill)
			}
			ty := y - 4
			if b.ratio < 1 {
				ty = y + 12
			}
			if b.ratio > ratioHi {
				ty = y + 12 + 8
			}
			fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="10">%s</text>`+"\n", cx, ty, fmtRatio(b.ratio))
			fmt.Fprintf(w, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", cx, oy+ph-mb+13, b.label)
			// The peer's name, split after its family ("sleef-u10/avx2").
			fam, variant, _ := strings.Cut(b.peer, "/")
			fmt.Fprintf(w, `<text x="%.1f" y="%d" text-anchor="middle" font-size="8" fill="#777">%s</text>`+"\n", cx, oy+ph-mb+24, html.EscapeString(fam))
			if variant != "" {
				fmt.Fprintf(w, `<text x="%.1f" y="%d" text-anchor="middle" font-size="8" fill="#777">/%s</text>`+"\n", cx, oy+ph-mb+33, html.EscapeString(variant))
			}
		}
		fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black" stroke-width="1.5"/>`+"\n", x0, one, x1, one)
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="end" font-weight="bold">1×</text>`+"\n", x0-4, one+4)
		fmt.Fprintf(w, `<text x="%.1f" y="%d" text-anchor="middle" fill="#444" font-size="10">%s</text>`+"\n", (x0+x1)/2, oy+ph-4, axisLabel(p.k))
	}
	fmt.Fprintln(w, "</svg>")
}

func fmtRatio(r float64) string {
	if r >= 10 {
		return fmt.Sprintf("%.0f×", r)
	}
	return fmt.Sprintf("%.2f×", r)
}
