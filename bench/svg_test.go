package bench

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

// TestWriteRatioSVG checks that the ratio plot is well-formed XML and draws
// heed's lead green and its lag red, labelled with the ratio and the peer.
func TestWriteRatioSVG(t *testing.T) {
	heed, peer := &Impl{Name: "heed/avx2", Heed: true}, &Impl{Name: "vek"}
	par := &Impl{Name: "heed×2", Heed: true, Parallel: true}
	lead, lag := &Case{Kernel: Dot, N: 64}, &Case{Kernel: Dot, N: 4096}
	rs := []Result{
		{Case: lead, Impl: heed, Ns: 10}, {Case: lead, Impl: peer, Ns: 25},
		{Case: lag, Impl: heed, Ns: 200}, {Case: lag, Impl: peer, Ns: 100}, {Case: lag, Impl: par, Ns: 1},
	}
	var b bytes.Buffer
	WriteRatioSVG(&b, "test", rs)
	d := xml.NewDecoder(bytes.NewReader(b.Bytes()))
	for {
		if _, err := d.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("not well-formed: %v", err)
		}
	}
	s := b.String()
	for _, want := range []string{
		`fill="#2a9d3a"><title>Dot 64: 2.50× vek</title>`,
		`fill="#d62728"><title>Dot 4K: 0.50× vek</title>`, // the parallel heed×2 is not ranked
		">2.50×<", ">0.50×<",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the plot lacks %q", want)
		}
	}
}
