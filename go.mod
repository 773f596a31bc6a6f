module github.com/heedml/heed

go 1.24.0

require github.com/klauspost/cpuid/v2 v2.4.2

require golang.org/x/sys v0.41.0
