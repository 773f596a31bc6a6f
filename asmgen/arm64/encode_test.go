package arm64

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/arch/arm64/arm64asm"
)

// samples returns every encoder with registers that exercise each field.
func samples() []Inst {
	var out []Inst
	regs := [][3]Reg{{0, 0, 0}, {1, 2, 3}, {31, 17, 8}, {5, 30, 31}}
	three := []func(d, n, m Reg) Inst{FADD, FSUB, FMUL, FDIV, FMAX, FMIN, FMLA, FMLS, FADDP, FMAXP,
		FRECPS, FCMEQ, FCMGE, FCMGT, FACGT, FACGE, ADD, SUB, CMGT, CMEQ, AND, BIC, EOR, BSL, BIT, BIF, ADDP}
	two := []func(d, n Reg) Inst{FRINTN, FRINTM, FCVTZS, FCVTNS, SCVTF, FABS, FNEG, FRECPE, FSQRT, FMAXV, FADDPS, FMAXPS}
	for _, r := range regs {
		for _, f := range three {
			out = append(out, f(r[0], r[1], r[2]))
		}
		// ORR with n == m is the MOV alias; keep the registers distinct.
		out = append(out, ORR(r[0], r[1], r[1]+1))
		for _, f := range two {
			out = append(out, f(r[0], r[1]))
		}
		for _, sh := range []uint{1, 13, 23, 31} {
			out = append(out, SHL(r[0], r[1], sh), USHR(r[0], r[1], sh), SSHR(r[0], r[1], sh))
		}
		for i := uint(0); i < 4; i++ {
			out = append(out, FMLAE(r[0], r[1], r[2], i), FMLSE(r[0], r[1], r[2], i), FMULE(r[0], r[1], r[2], i))
		}
		out = append(out, SHL(r[0], r[1], 0), USHR(r[0], r[1], 32), SSHR(r[0], r[1], 32))
		for _, f := range []func(d, n Reg) Inst{FCVTL, FCVTL2, FCVTN, FCVTN2, SHLL, SHLL2, XTN,
			SXTLB, SXTL2B, SXTLH, SXTL2H, UMAXV, UMINV} {
			out = append(out, f(r[0], r[1]))
		}
		out = append(out, UZP2H(r[0], r[1], r[2]))
		for i := uint(0); i < 4; i++ {
			out = append(out, UMOVS(GP(r[0]%31), r[1], i))
		}
		out = append(out, MOV(r[0], r[1]), DUPW(r[0], GP(r[2]%31)))
		for i := uint(0); i < 4; i++ {
			out = append(out, DUPE(r[0], r[1], i), INSW(r[0], i, GP(r[2]%31)))
		}
	}
	return out
}

// extraSamples returns the encoders of instructions that golang.org/x/arch
// does not decode (DecodeExtra does), with registers that exercise each field.
func extraSamples() []Inst {
	var out []Inst
	for _, r := range [][3]Reg{{0, 0, 0}, {1, 2, 3}, {31, 17, 8}, {5, 30, 31}, {16, 8, 4}} {
		out = append(out, SDOT(r[0], r[1], r[2]))
	}
	return out
}

// TestKnown checks encodings against words written down from the Arm ARM
// (and GNU as), independently of the encoder's tables.
func TestKnown(t *testing.T) {
	for _, c := range []struct {
		got  Inst
		want uint32
	}{
		{FADD(0, 1, 2), 0x4e22d420},
		{FMLA(3, 2, 1), 0x4e21cc43}, // Go's VFMLA V1.S4, V2.S4, V3.S4
		{EOR(0, 0, 0), 0x6e201c00},  // Go's VEOR V0.B16, V0.B16, V0.B16
		{FMUL(4, 5, 6), 0x6e26dca4},
		{FMAX(1, 1, 2), 0x4e22f421},
		{FRINTN(0, 1), 0x4e218820},
		{FCVTZS(2, 3), 0x4ea1b862},
		{FSQRT(1, 2), 0x6ea1f841}, // fsqrt v1.4s, v2.4s
		{SHL(0, 1, 23), 0x4f375420},
		{USHR(0, 1, 1), 0x6f3f0420},
		{FMAXV(0, 1), 0x6e30f820},
		{FADDPS(0, 0), 0x7e30d800},
		{FMLAE(0, 1, 2, 3), 0x4fa21820},
		{FMULE(4, 5, 17, 1), 0x4fb190a4},
		{MOV(2, 1), 0x4ea11c22},       // Go's VMOV V1.B16, V2.B16
		{DUPE(31, 31, 0), 0x4e0407ff}, // Go's VDUP V31.S[0], V31.S4
		{DUPW(23, 27), 0x4e040f77},    // Go's VDUP R27, V23.S4
		{INSW(23, 2, 27), 0x4e141f77}, // Go's VMOV R27, V23.S[2]
		{FCVTL(0, 1), 0x0e217820},     // fcvtl v0.4s, v1.4h
		{FCVTL2(2, 3), 0x4e217862},    // fcvtl2 v2.4s, v3.8h
		{FCVTN(0, 1), 0x0e216820},     // fcvtn v0.4h, v1.4s
		{FCVTN2(0, 1), 0x4e216820},    // fcvtn2 v0.8h, v1.4s
		{SHLL(0, 1), 0x2e613820},      // shll v0.4s, v1.4h, #16
		{SHLL2(0, 1), 0x6e613820},     // shll2 v0.4s, v1.8h, #16
		{XTN(0, 1), 0x0e612820},       // xtn v0.4h, v1.4s
		{UZP2H(0, 1, 2), 0x4e425820},  // uzp2 v0.8h, v1.8h, v2.8h
		{SXTLB(0, 1), 0x0f08a420},     // sxtl v0.8h, v1.8b (sshll #0)
		{SXTL2H(0, 1), 0x4f10a420},    // sxtl2 v0.4s, v1.8h
		{UMOVS(0, 1, 1), 0x0e0c3c20},  // mov w0, v1.s[1]
		{UMINV(2, 3), 0x6eb1a862},     // uminv s2, v3.4s
		{ADDP(0, 1, 2), 0x4ea2bc20},   // addp v0.4s, v1.4s, v2.4s
		{SDOT(0, 1, 2), 0x4e829420},   // sdot v0.4s, v1.16b, v2.16b
		{SDOT(31, 17, 8), 0x4e88963f}, // sdot v31.4s, v17.16b, v8.16b
	} {
		if c.got.Word != c.want {
			t.Errorf("%s = %#08x, want %#08x", c.got.Asm, c.got.Word, c.want)
		}
	}
}

// normalize maps the disassembler's spelling onto ours: lower case, decimal
// immediates.
func normalize(s string) string {
	s = strings.ToLower(s)
	if i := strings.Index(s, "#0x"); i >= 0 {
		v, err := strconv.ParseUint(s[i+3:], 16, 32)
		if err == nil {
			s = s[:i+1] + strconv.FormatUint(v, 10)
		}
	}
	return s
}

// TestDecode decodes every sample with golang.org/x/arch and compares the mnemonic.
func TestDecode(t *testing.T) {
	for _, in := range samples() {
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], in.Word)
		d, err := arm64asm.Decode(b[:])
		if err != nil {
			t.Errorf("%s (%#08x): %v", in.Asm, in.Word, err)
			continue
		}
		if got := normalize(arm64asm.GNUSyntax(d)); got != in.Asm {
			t.Errorf("%#08x decodes as %q, want %q", in.Word, got, in.Asm)
		}
	}
}

// TestDecodeExtra checks DecodeExtra on the instructions golang.org/x/arch
// does not know: it gives each one's spelling, and x/arch still does not
// decode them (when it does, they belong in samples). It must not claim any
// word of samples. TestGNUAssembler checks the words themselves.
func TestDecodeExtra(t *testing.T) {
	for _, in := range extraSamples() {
		if got, ok := DecodeExtra(in.Word); !ok || got != in.Asm {
			t.Errorf("DecodeExtra(%#08x) = %q, %v; want %q", in.Word, got, ok, in.Asm)
		}
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], in.Word)
		if d, err := arm64asm.Decode(b[:]); err == nil {
			t.Errorf("x/arch now decodes %#08x as %q: move %s into samples", in.Word, arm64asm.GNUSyntax(d), in.Asm)
		}
	}
	for _, in := range samples() {
		if got, ok := DecodeExtra(in.Word); ok {
			t.Errorf("DecodeExtra(%#08x) (%s) = %q, want not ok", in.Word, in.Asm, got)
		}
	}
}

// TestGNUAssembler assembles every sample's mnemonic and every extra
// sample's (with the dotprod extension enabled) with binutils and
// compares the words; it skips where aarch64-linux-gnu-as is not installed.
func TestGNUAssembler(t *testing.T) {
	as, err := exec.LookPath("aarch64-linux-gnu-as")
	if err != nil {
		t.Skip("aarch64-linux-gnu-as not installed")
	}
	objcopy, err := exec.LookPath("aarch64-linux-gnu-objcopy")
	if err != nil {
		t.Skip("aarch64-linux-gnu-objcopy not installed")
	}
	dir := t.TempDir()
	src, obj, bin := filepath.Join(dir, "s.s"), filepath.Join(dir, "s.o"), filepath.Join(dir, "s.bin")
	ins := append(samples(), extraSamples()...)
	var buf bytes.Buffer
	buf.WriteString(".arch armv8.2-a+dotprod\n")
	for _, in := range ins {
		buf.WriteString(in.Asm + "\n")
	}
	if err := os.WriteFile(src, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(as, "-o", obj, src).CombinedOutput(); err != nil {
		t.Fatalf("as: %v\n%s", err, out)
	}
	if out, err := exec.Command(objcopy, "-O", "binary", "-j", ".text", obj, bin).CombinedOutput(); err != nil {
		t.Fatalf("objcopy: %v\n%s", err, out)
	}
	code, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if len(code) != 4*len(ins) {
		t.Fatalf("as produced %d bytes for %d instructions", len(code), len(ins))
	}
	for i, in := range ins {
		if w := binary.LittleEndian.Uint32(code[4*i:]); w != in.Word {
			t.Errorf("%s: as gives %#08x, encoder %#08x", in.Asm, w, in.Word)
		}
	}
}

// TestGoAssembler assembles the Go spelling of every sample that has one with
// Go's arm64 assembler and compares the words it lists (go tool asm -S).
func TestGoAssembler(t *testing.T) {
	var ins []Inst
	for _, in := range samples() {
		if in.Go != "" {
			ins = append(ins, in)
		}
	}
	if len(ins) == 0 {
		t.Fatal("no sample has a Go spelling")
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skipf("go env GOROOT: %v", err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "s.s")
	var buf bytes.Buffer
	buf.WriteString("TEXT ·f(SB), 4, $0-0\n")
	for _, in := range ins {
		buf.WriteString("\t" + in.Go + "\n")
	}
	if err := os.WriteFile(src, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "tool", "asm", "-S", "-p", "x", "-o", filepath.Join(dir, "s.o"),
		"-I", filepath.Join(strings.TrimSpace(string(goroot)), "pkg", "include"), src)
	cmd.Env = append(os.Environ(), "GOARCH=arm64", "GOOS=linux")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go tool asm: %v\n%s", err, out)
	}
	// The listing ends with a hex dump: "\t0x0010 22 1c a1 4e …  text".
	var code []byte
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasPrefix(f[0], "0x") || len(f[1]) != 2 {
			continue
		}
		for _, h := range f[1:min(len(f), 17)] {
			b, err := strconv.ParseUint(h, 16, 8)
			if err != nil || len(h) != 2 {
				break
			}
			code = append(code, byte(b))
		}
	}
	if len(code) < 4*len(ins) {
		t.Fatalf("go tool asm listed %d bytes for %d instructions:\n%s", len(code), len(ins), out)
	}
	for i, in := range ins {
		if w := binary.LittleEndian.Uint32(code[4*i:]); w != in.Word {
			t.Errorf("%s: Go's assembler gives %#08x, encoder %#08x", in.Go, w, in.Word)
		}
	}
}
