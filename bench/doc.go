// Package bench compares heed's kernels with the Go peers and OpenBLAS, side by
// side in one process. It is its own module so that the peers never enter the
// module graph of code that imports heed.
package bench
