package cluster

import "slices"

// idleCPUs are the CPUs of the other hosts on h's machine (the same
// kernel, as their infos name it) that h does not run on: under a
// launcher, the cores it bound the machine's other ranks to.
func idleCPUs(h *host, hosts []*host) []int {
	if h.info.Machine == "" {
		return nil
	}
	own := map[int]bool{}
	for _, c := range h.info.CPUs {
		own[c] = true
	}
	var idle []int
	for _, o := range hosts {
		if o == h || o.info.Machine != h.info.Machine {
			continue
		}
		for _, c := range o.info.CPUs {
			if !own[c] {
				own[c] = true
				idle = append(idle, c)
			}
		}
	}
	slices.Sort(idle)
	return idle
}
