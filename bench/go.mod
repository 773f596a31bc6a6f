module github.com/heedml/heed/bench

go 1.24

replace github.com/heedml/heed => ../
