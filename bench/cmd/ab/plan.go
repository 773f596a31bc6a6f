package main

// Side is one of the two versions compared.
type Side int

const (
	Old Side = iota
	New
)

func (s Side) String() string {
	if s == Old {
		return "old"
	}
	return "new"
}

// Order returns the runs of one benchmark over rounds rounds: each round
// runs both versions, old first in even rounds and new first in odd ones
// (ABBA…), so that neither version always runs first or always follows the
// other, and drift over the rounds falls on both alike.
func Order(rounds int) []Side {
	out := make([]Side, 0, 2*rounds)
	for r := range rounds {
		if r%2 == 0 {
			out = append(out, Old, New)
		} else {
			out = append(out, New, Old)
		}
	}
	return out
}
