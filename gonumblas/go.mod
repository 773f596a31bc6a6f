module github.com/heedml/heed/gonumblas

go 1.24.0

replace github.com/heedml/heed => ../

require (
	github.com/heedml/heed v0.0.0-00010101000000-000000000000
	gonum.org/v1/gonum v0.17.0
)

require (
	github.com/klauspost/cpuid/v2 v2.4.2 // indirect
	golang.org/x/sys v0.41.0 // indirect
)
