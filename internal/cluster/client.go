package cluster

import "net/http"

// NewTransport is the HTTP transport a coordinator talks to its agents
// through; the caller adds TLS. Each agent keeps its connection for
// requests open between them, however many agents there are: a
// transport's default (100 idle connections in all) closed most of them
// after each request to a thousand agents, and every ping opened a new one.
func NewTransport() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 0 // no limit in all
	tr.MaxIdleConnsPerHost = 2
	return tr
}
