package cluster

import "time"

// crowdTurn is, per host of a run on one machine and per CPU of that
// machine, how much longer than LostAfter a host may stay silent: two
// time slices (10 ms, the Go scheduler's and about Linux's). A thousand
// agents on one machine of 2 CPUs, each running its phase flat out, give
// each other a turn every 5 s (1,000 x 10 ms / 2): a heartbeat waits that
// long for its turn, though nothing is wrong.
const crowdTurn = 20 * time.Millisecond

// Crowded is how much longer than alone a host may go without a word, or
// a word from its coordinator, when n hosts of a run share a machine of
// cpus CPUs: 0 when each has a CPU, and n x crowdTurn / cpus beyond.
// A host that dies is still found at once (its connections break); only
// a host that lives and says nothing is waited for longer.
func Crowded(n, cpus int) time.Duration {
	cpus = max(cpus, 1)
	if n <= cpus {
		return 0
	}
	return time.Duration(n) * crowdTurn / time.Duration(cpus)
}

// silences sets each host's limit of silence from what the hosts' infos
// say: LostAfter, and more for the hosts that crowd one machine (the same
// kernel), which its job tells the host (Job.Crowd) for its own limit on
// the coordinator's silence; the longest is the room a release has
// (releaseWithin).
func (c *Coordinator) silences(hosts []*host) {
	on := map[string]int{}
	for _, h := range hosts {
		if h.info.Machine != "" {
			on[h.info.Machine]++
		}
	}
	c.longest = c.LostAfter
	for _, h := range hosts {
		h.crowd = 0
		if m := h.info.Machine; m != "" {
			h.crowd = Crowded(on[m], h.info.Host.CPUs)
		}
		c.longest = max(c.longest, c.LostAfter+h.crowd)
	}
}

// maxCrowd bounds the longer wait a job may ask of an agent (Job.Crowd):
// a crowd of 10,000 hosts on 2 CPUs; no job keeps an agent's files for
// long after its coordinator is gone.
const maxCrowd = 10_000 * crowdTurn / 2

// pingEvery is how often the pinger tells h that its coordinator is
// there: every HeartbeatEvery, or a quarter of the crowd's share on a
// crowded machine, whose agents wait that much longer for a ping (a
// thousand agents on 2 CPUs: every 2.5 s, not every second, which cost
// them and the coordinator a request each a second).
func (h *host) pingEvery() time.Duration { return max(HeartbeatEvery, h.crowd/4) }
