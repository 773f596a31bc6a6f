// Command report runs heed's kernel benchmarks and prints them in benchstat's
// format. `make bench` runs it.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
)

func main() {
	fmt.Fprintf(os.Stderr, "heed bench on %s/%s, %d CPUs\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", "Dot|MatVec", "-count", "3", "github.com/heedml/heed/kernels")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}
