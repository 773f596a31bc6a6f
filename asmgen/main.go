// Command asmgen writes heed's amd64 assembly kernels and their Go declarations
// with avo. Each kernel family (dot, matvec, exp, …) lives in one file that
// registers a generator; the generator is table-driven over the ISAs in isa.go,
// so one piece of code emits the AVX2 and the AVX-512 version of a kernel.
//
// Run from this directory (make generate does):
//
//	go run . [-dir ../kernels]
//
// writes, for every family F, DIR/F_amd64.s and DIR/F_stub_amd64.go, then the
// arm64 NEON files DIR/F_arm64.s and DIR/F_stub_arm64.go (neon.go). With
// -family F it writes just that family; avo's global builder holds one file,
// so the driver runs itself once per family.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"

	. "github.com/mmcloughlin/avo/build"
)

// families maps a family name to its generator.
var families = map[string]func(){}

func register(name string, gen func()) { families[name] = gen }

func main() {
	family := flag.String("family", "", "generate only this kernel family")
	flag.Parse()
	dir := os.Getenv("ASMGEN_DIR") // set by the parent, kept out of argv so the header is stable
	if dir == "" {
		dir = filepath.Join("..", "kernels")
	}
	if *family == "" {
		for _, name := range sortedFamilies() {
			cmd := exec.Command(os.Args[0], "-family", name)
			cmd.Env = append(os.Environ(), "ASMGEN_DIR="+dir)
			cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
			if err := cmd.Run(); err != nil {
				fmt.Fprintf(os.Stderr, "asmgen: family %s: %v\n", name, err)
				os.Exit(1)
			}
		}
		if err := generateNEON(dir); err != nil {
			fmt.Fprintf(os.Stderr, "asmgen: neon: %v\n", err)
			os.Exit(1)
		}
		return
	}
	gen, ok := families[*family]
	if !ok {
		fmt.Fprintf(os.Stderr, "asmgen: unknown family %q (have %v)\n", *family, sortedFamilies())
		os.Exit(2)
	}
	for name, value := range map[string]string{
		"out":   filepath.Join(dir, *family+"_amd64.s"),
		"stubs": filepath.Join(dir, *family+"_stub_amd64.go"),
		"pkg":   "kernels",
	} {
		if err := flag.Set(name, value); err != nil {
			panic(err)
		}
	}
	ConstraintExpr("!purego")
	gen()
	Generate()
}

func sortedFamilies() []string {
	names := make([]string, 0, len(families))
	for name := range families {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
