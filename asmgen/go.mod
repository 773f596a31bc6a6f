module github.com/heedml/heed/asmgen

go 1.26.0

require (
	github.com/mmcloughlin/avo v0.6.0
	golang.org/x/arch v0.6.0
)

require (
	github.com/heedml/heed v0.1.0
	golang.org/x/mod v0.21.0 // indirect
	golang.org/x/sync v0.8.0 // indirect
	golang.org/x/tools v0.25.1 // indirect
)
