package cluster

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/fsbench/fsbench/internal/units"
)

// listAll is how many addresses a list names in full; a longer one is
// summarized unless verbose.
const listAll = 8

// HostList names the agents of a run for a line of output: every address
// when there are few or verbose is set; else runs of consecutive ports on
// one host as a range (127.0.0.1:21001-21400), and of more than listAll
// items the first ones and how many more.
func HostList(addrs []string, verbose bool) string {
	if verbose || len(addrs) <= listAll {
		return strings.Join(addrs, ", ")
	}
	var items []string
	for i := 0; i < len(addrs); {
		host, first, ok := splitPort(addrs[i])
		j := i + 1
		for ok && j < len(addrs) {
			h, p, ok2 := splitPort(addrs[j])
			if !ok2 || h != host || p != first+(j-i) {
				break
			}
			j++
		}
		if j-i > 1 {
			items = append(items, fmt.Sprintf("%s-%d", addrs[i], first+j-i-1))
		} else {
			items = append(items, addrs[i])
		}
		i = j
	}
	if len(items) <= listAll {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:listAll-1], ", ") + fmt.Sprintf(", ... (%d more; -v lists all)", len(items)-listAll+1)
}

func splitPort(addr string) (string, int, bool) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, false
	}
	p, err := strconv.Atoi(port)
	return host, p, err == nil
}

// few names the first of addrs, and how many more, unless the coordinator
// is verbose.
func (c *Coordinator) few(addrs []string) string { return Few(addrs, c.Verbose) }

// named is one host or several, named: "host a:1" or "37 hosts: a:1, ...".
func (c *Coordinator) named(addrs []string) string {
	if len(addrs) == 1 {
		return "host " + addrs[0]
	}
	return units.Count(len(addrs), "host") + ": " + c.few(addrs)
}

// Few names the first five of addrs and how many more, or all of them if
// verbose.
func Few(addrs []string, verbose bool) string {
	const n = 5
	if verbose || len(addrs) <= n {
		return strings.Join(addrs, ", ")
	}
	return strings.Join(addrs[:n], ", ") + fmt.Sprintf(", ... (%d more; -v for all)", len(addrs)-n)
}

// Causes groups hosts by what happened to them (a failure, a warning), in
// the order first met, to tell each once with the hosts it happened to.
type Causes struct {
	order []string
	hosts map[string][]string
}

// Add notes that cause happened to the host at addr.
func (g *Causes) Add(addr, cause string) {
	if g.hosts == nil {
		g.hosts = map[string][]string{}
	}
	if _, ok := g.hosts[cause]; !ok {
		g.order = append(g.order, cause)
	}
	g.hosts[cause] = append(g.hosts[cause], addr)
}

func (g *Causes) empty() bool { return len(g.order) == 0 }

// Lines are one line per cause: "37 hosts: connection refused: a, b, ...".
func (g *Causes) Lines(few func([]string) string) []string {
	var out []string
	for _, cause := range g.order {
		addrs := g.hosts[cause]
		if len(addrs) == 1 {
			out = append(out, "host "+addrs[0]+": "+cause)
			continue
		}
		out = append(out, units.Count(len(addrs), "host")+": "+cause+": "+few(addrs))
	}
	return out
}
