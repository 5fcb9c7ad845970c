package cluster

import "net/http"

// NewTransport is the HTTP transport a coordinator talks to its agents
// through; the caller adds TLS. Each agent keeps its connection for
// requests open between them, however many agents there are: a
// transport's default (100 idle connections in all) closed most of them
// after each request to a thousand agents, and every ping opened a new one.
// One a host, not more: a second request made while the first was under
// way (a ping during a release) closes its connection after its answer,
// so that the coordinator's open files are two a host at most, the event
// stream's and this one, and the requests in flight (fitFiles).
func NewTransport() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 0 // no limit in all
	tr.MaxIdleConnsPerHost = 1
	return tr
}
