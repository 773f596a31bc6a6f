//go:build unix

package bench

import (
	"os"
	"syscall"
)

// ReexecForOpenBLAS re-executes the process with OPENBLAS_CORETYPE set where
// OpenBLAS chose a core below the CPU's instruction set (OpenBLASCoreToSet),
// so that OpenBLAS, loading again, takes the matching core. It returns only
// when it does not re-execute (nil) or when the exec fails.
func ReexecForOpenBLAS() error {
	set, chose := OpenBLASCoreToSet()
	if set == "" {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	env := append(os.Environ(), "OPENBLAS_CORETYPE="+set, OpenBLASChoseEnv+"="+chose)
	return syscall.Exec(exe, os.Args, env)
}
