package objbench

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Operations of the mixed workload, in the order its rows are shown.
const (
	opGet = iota
	opStat
	opPut
	opDelete
	numOps
)

// opNames are the operations' names in --mix and in the result rows.
var opNames = [numOps]string{"get", "stat", "put", "delete"}

// Mix is the weights of the operations of the mixed workload.
type Mix [numOps]int

// DefaultMix is warp's default mix: 45% get, 30% stat, 15% put, 10%
// delete.
var DefaultMix = Mix{opGet: 45, opStat: 30, opPut: 15, opDelete: 10}

// ParseMix parses --mix: OP=WEIGHT pairs separated by commas, e.g.
// "get=45,stat=30,put=15,delete=10". Operations left out weigh 0; the
// weights must not all be 0.
func ParseMix(s string) (Mix, error) {
	var m Mix
	var seen [numOps]bool
	for _, part := range strings.Split(s, ",") {
		name, weight, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return Mix{}, fmt.Errorf("%q: want OP=WEIGHT, e.g. get=45", part)
		}
		op := opIndex(strings.TrimSpace(name))
		if op < 0 {
			return Mix{}, fmt.Errorf("%q: unknown operation; one of %s", name, strings.Join(opNames[:], ", "))
		}
		if seen[op] {
			return Mix{}, fmt.Errorf("%s is given twice", opNames[op])
		}
		seen[op] = true
		w, err := strconv.Atoi(strings.TrimSpace(weight))
		if err != nil || w < 0 || w > 1_000_000 {
			return Mix{}, fmt.Errorf("%q: the weight must be a whole number from 0 to 1000000", part)
		}
		m[op] = w
	}
	if m.total() == 0 {
		return Mix{}, errors.New("the weights add up to 0")
	}
	return m, nil
}

func opIndex(name string) int {
	for i, n := range opNames {
		if n == name {
			return i
		}
	}
	return -1
}

func (m *Mix) total() int {
	t := 0
	for _, w := range m {
		t += w
	}
	return t
}

// draw picks an operation with the mix's weights.
func (m *Mix) draw(r *rand.Rand) int {
	k := r.IntN(m.total())
	for op, w := range m {
		if k < w {
			return op
		}
		k -= w
	}
	return numOps - 1
}

// String is the mix as --mix takes it.
func (m Mix) String() string {
	var parts []string
	for op, w := range m {
		if w > 0 {
			parts = append(parts, opNames[op]+"="+strconv.Itoa(w))
		}
	}
	return strings.Join(parts, ",")
}
