package cluster

import (
	"context"
	"time"
)

// clockSamples is how often preflight asks each agent for its clock. A
// host's phases are placed in time by the offset of its clock from the
// coordinator's, so an error in it moves the host's start and end and
// lengthens a phase's span (from the first start to the last end). One
// answer each, on a machine with 2 CPUs and 2 or 4 ranks starting, put
// agents on the coordinator's own clock 0.02 to 0.5 ms off; the answer of
// the shortest round trip is off by at most half of that trip.
const clockSamples = 5

// clock reads h's information and the offset of its clock: 0 when it runs
// on the coordinator's kernel (machine), which its first answer says, else
// estimated from clockSamples answers (offsetOf). A thousand agents on
// the coordinator's machine are asked once each, not five times.
func (c *Coordinator) clock(ctx context.Context, h *host, machine string) error {
	samples := make([]clockSample, 0, clockSamples)
	for i := 0; i < clockSamples && (i == 0 || machine == "" || samples[0].info.Machine != machine); i++ {
		var s clockSample
		s.sent = time.Now()
		if err := c.call(ctx, h, "GET", "/v1/info", nil, &s.info); err != nil {
			return err
		}
		s.rtt = time.Since(s.sent)
		samples = append(samples, s)
	}
	i, offset := offsetOf(samples)
	h.info, h.offset = samples[i].info, offset
	h.rtt.Store(int64(samples[i].rtt))
	if machine != "" && h.info.Machine == machine {
		h.offset, h.sameClock = 0, true
	}
	return nil
}

// clockSample is one answer to a request for an agent's information.
type clockSample struct {
	sent time.Time     // when the request left, on the coordinator's clock
	rtt  time.Duration // until its answer came back
	info Info          // Time: the agent's clock while it answered
}

// offsetOf picks the sample of the shortest round trip and returns it and
// the agent's clock offset it gives (agent minus coordinator): the agent
// read its clock within that trip, taken as its middle, so the estimate
// is off by at most half the trip.
func offsetOf(samples []clockSample) (int, time.Duration) {
	best := 0
	for i, s := range samples {
		if s.rtt < samples[best].rtt {
			best = i
		}
	}
	s := samples[best]
	return best, s.info.Time.Sub(s.sent.Add(s.rtt / 2))
}
