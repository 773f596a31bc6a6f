module github.com/heedml/heed/gonumblas

go 1.24.0

require (
	github.com/heedml/heed v0.1.0
	gonum.org/v1/gonum v0.17.0
)

require (
	github.com/klauspost/cpuid/v2 v2.4.2 // indirect
	golang.org/x/sys v0.41.0 // indirect
)
