package main

import (
	"bufio"
	"encoding/binary"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/heedml/heed/asmgen/arm64"
	"golang.org/x/arch/arm64/arm64asm"
)

var wordLine = regexp.MustCompile(`^\tWORD \$0x([0-9a-f]{8}) // (.*)$`)

// TestNEONWords decodes every WORD in the committed kernels/*_arm64.s with
// golang.org/x/arch and checks that it is the instruction its comment names.
func TestNEONWords(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "kernels", "*_arm64.s"))
	if len(files) == 0 {
		t.Fatal("no kernels/*_arm64.s")
	}
	words := 0
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for line := 1; sc.Scan(); line++ {
			m := wordLine.FindStringSubmatch(sc.Text())
			if m == nil {
				if strings.Contains(sc.Text(), "WORD") {
					t.Errorf("%s:%d: WORD without a mnemonic: %q", name, line, sc.Text())
				}
				continue
			}
			w, _ := strconv.ParseUint(m[1], 16, 32)
			var b [4]byte
			binary.LittleEndian.PutUint32(b[:], uint32(w))
			in, err := arm64asm.Decode(b[:])
			if err != nil {
				// x/arch does not know SDOT: arm64.DecodeExtra, checked
				// against binutils, decodes it.
				if got, ok := arm64.DecodeExtra(uint32(w)); ok {
					if got != m[2] {
						t.Errorf("%s:%d: %s decodes as %q, comment says %q", name, line, m[1], got, m[2])
					}
					words++
					continue
				}
				t.Errorf("%s:%d: %s does not decode: %v", name, line, m[1], err)
				continue
			}
			got := strings.ToLower(arm64asm.GNUSyntax(in))
			if i := strings.Index(got, "#0x"); i >= 0 {
				if v, err := strconv.ParseUint(got[i+3:], 16, 32); err == nil {
					got = got[:i+1] + strconv.FormatUint(v, 10)
				}
			}
			if got != m[2] {
				t.Errorf("%s:%d: %s decodes as %q, comment says %q", name, line, m[1], got, m[2])
			}
			words++
		}
		f.Close()
	}
	t.Logf("%d WORDs in %d files checked", words, len(files))
}
