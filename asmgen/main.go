// Command asmgen writes heed's amd64 assembly kernels and their Go declarations
// with avo. Each kernel family (dot, matvec, exp, …) lives in one file that
// registers a generator; the generator is table-driven over the ISAs in isa.go,
// so one piece of code emits the AVX2 and the AVX-512 versions of a kernel.
//
// Run from this directory (make generate does):
//
//	go run . [-dir ../kernels] [-family F]
//
// writes, for every family F, DIR/F_amd64.s and DIR/F_stub_amd64.go, then the
// arm64 NEON files DIR/F_arm64.s and DIR/F_stub_arm64.go (neon.go). With
// -family F it writes just the amd64 family F. See DESIGN.md for how the
// kernels are laid out and why.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	. "github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/ir"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/pass"
	"github.com/mmcloughlin/avo/printer"
)

// families maps a family name to its generator.
var families = map[string]func(){}

func register(name string, gen func()) { families[name] = gen }

// trials maps a family name to the generator of its trial variants: kernels
// that no CPU class takes by default, kept to measure against the default
// ones. They are written only with -trial (or ASMGEN_TRIAL=1), to
// F_trial_amd64.s and F_trial_stub_amd64.go under the heedtrial build tag,
// and are not committed (.gitignore); the tests that compare them carry the
// same tag (go test -tags heedtrial ./kernels).
var trials = map[string]func(){}

func registerTrial(name string, gen func()) { trials[name] = gen }

// asm is the avo build context of the file being generated: generateFamily
// gives every family a fresh one, and the generators emit through it
// (asm.VADDPS(…), asm.YMM(), …).
var asm *build.Context

// TEXT starts function name with attributes a and Go signature sig. Every
// kernel is noescape: none keeps a pointer it is given, so callers' stack
// buffers stay on the stack. Every kernel starts on a 64-byte boundary
// (PCALIGN $64 at its first byte, which pads nothing there but makes the
// linker align the function so): its loops then sit at the same offsets
// within the 64-byte fetch blocks whatever precedes the function in the
// binary, where the linker's 32-byte alignment left two layouts that a
// change to any other kernel could swap (kernels/DESIGN.md, "Code alignment").
func TEXT(name string, a Attribute, sig string) {
	asm.Function(name)
	asm.Attributes(a)
	asm.SignatureExpr(sig)
	asm.Pragma("noescape")
	asm.Instruction(&ir.Instruction{Opcode: "PCALIGN", Operands: []Op{Imm(64)}})
}

// GLOBL starts a static data section and returns its address.
func GLOBL(name string, a Attribute) Mem {
	m := asm.StaticGlobal(name)
	asm.DataAttributes(a)
	return m
}

// DATA sets the constant at offset of the current data section.
func DATA(offset int, v Constant) { asm.AddDatum(offset, v) }

// printConfig names the generator in every amd64 file's header, the same
// whichever family or directory it writes.
var printConfig = printer.Config{Name: "command: go run . (asmgen)", Pkg: "kernels"}

func main() {
	dir := flag.String("dir", filepath.Join("..", "kernels"), "output directory")
	family := flag.String("family", "", "generate only this amd64 kernel family")
	trial := flag.Bool("trial", os.Getenv("ASMGEN_TRIAL") != "", "also write the trial variants (heedtrial build tag)")
	flag.Parse()
	var err error
	if *family != "" {
		if _, ok := families[*family]; !ok {
			fmt.Fprintf(os.Stderr, "asmgen: unknown family %q (have %v)\n", *family, sortedFamilies())
			os.Exit(2)
		}
		err = generateFamily(*dir, *family)
	} else {
		err = generateAll(*dir)
	}
	if err == nil && *trial {
		err = generateTrials(*dir)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "asmgen: %v\n", err)
		os.Exit(1)
	}
}

// generateAll writes every amd64 and arm64 family into dir.
func generateAll(dir string) error {
	for _, name := range sortedFamilies() {
		if err := generateFamily(dir, name); err != nil {
			return err
		}
	}
	if err := generateNEON(dir); err != nil {
		return fmt.Errorf("neon: %w", err)
	}
	return nil
}

// generateTrials writes every family's trial variants into dir.
func generateTrials(dir string) error {
	names := make([]string, 0, len(trials))
	for name := range trials {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := generate(dir, name+"_trial", "heedtrial,!purego", trials[name]); err != nil {
			return err
		}
	}
	return nil
}

// generateFamily builds amd64 family name in a fresh context and writes its
// assembly and stubs into dir.
func generateFamily(dir, name string) error {
	return generate(dir, name, "!purego", families[name])
}

// generate runs gen in a fresh context and writes the assembly and stubs it
// emits into dir as file+"_amd64.s" and file+"_stub_amd64.go", under the
// build constraint constraint.
func generate(dir, file, constraint string, gen func()) error {
	asm = build.NewContext()
	defer func() { asm = nil }()
	resetFileData()
	asm.ConstraintExpr(constraint)
	gen()
	emitConsts()
	f, err := asm.Result()
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if err := pass.Compile.Execute(f); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	for suffix, p := range map[string]printer.Printer{
		"_amd64.s":       printer.NewGoAsm(printConfig),
		"_stub_amd64.go": printer.NewStubs(printConfig),
	} {
		b, err := p.Print(f)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if err := os.WriteFile(filepath.Join(dir, file+suffix), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// resetFileData forgets the data sections (constant tables) that are emitted
// once per file, so the next family emits its own.
func resetFileData() {
	constTable.offset, constTable.bits = nil, nil
	tailTableMem = nil
	clear(f32Consts)
}

func sortedFamilies() []string {
	names := make([]string, 0, len(families))
	for name := range families {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
